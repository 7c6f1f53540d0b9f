"""`PredrelLifecycleNode`: `PredrelNode`'s kit on a managed (rclpy.lifecycle) node whose slow
configure (a model load, a TensorRT engine build of minutes) never stops it answering.

rclpy's LifecycleNode runs a transition's callback inside the change_state service callback, on the
executor thread: while `on_configure` loads a model, no parameter request is answered and no
/diagnostics goes out. Here:

- `on_configure` runs in a thread of its own ("transition thread"); the change_state request is
  answered when it ends (the response is held back, the executor keeps spinning), and meanwhile
  the node's /diagnostics says `configuring: <what on_configure reports with configure_progress>`
  (WARN) and its parameter services answer;
- the other transitions (activate, deactivate, cleanup, shutdown, error processing) are quick and
  run on the executor thread, as in rclpy, so they may create and destroy subscriptions and touch
  what the subscription callbacks touch;
- an exception in a transition callback is logged with its traceback and held on /diagnostics as an
  ERROR (rclpy drops it silently), and the transition ends as rclpy ends it: ERROR, on_error, and
  back to unconfigured; a callback returning FAILURE is held on /diagnostics too (`transition_failed`);
- a node that is not active starts its /diagnostics message with its state ("unconfigured, not
  processing", level OK unless something is wrong);
- one transition at a time: a request while one runs is refused (success false, logged); refused
  and impossible requests are logged rate-limited (a client retrying in a loop does not flood the log);
- parameter `autostart` (default true): configure then activate once the node is spun, the way
  `predrel run` and the launch files want it; false leaves it unconfigured for a lifecycle manager
  (`ros2 lifecycle set /perception configure`, nav2's lifecycle_manager);
- `destroy_node` shuts the node down from whatever primary state it is in (on_shutdown), waiting a
  while for a configure still running.

The lifecycle state is on /diagnostics (`lifecycle`) and available through the standard services
(`<node>/get_state`, `<node>/change_state`, ...) and topic (`<node>/transition_event`, published by
rcl_lifecycle itself, so it is not among the node's Python publishers).
"""
from __future__ import annotations

import threading
import traceback
from typing import Any, Callable, Mapping, Sequence

import lifecycle_msgs.srv
from lifecycle_msgs.msg import State, Transition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.lifecycle import LifecycleNodeMixin, LifecycleState, TransitionCallbackReturn
from rclpy.qos import QoSProfile
from rclpy.service import Service

from predrel_ros.ros.kit.health import ERROR, OK, WARN
from predrel_ros.ros.kit.node_base import PredrelNode
from predrel_ros.ros.kit.parameter_specs import ParameterSpec

#: the parameter every lifecycle node declares (added when the node's list lacks it)
AUTOSTART = ParameterSpec(
    "autostart", True, "configure and activate at start (predrel run, the launch files); false: stay unconfigured "
    "for a lifecycle manager (ros2 lifecycle set <node> configure, then activate)",
    fixed_because="it acts once, when the node starts; the lifecycle transitions decide afterwards")
#: how long destroy_node waits for a configure still running in its thread
CONFIGURE_JOIN_S = 10.0
#: health condition keys
_TRANSITION, _FAILED, _STATE = "lifecycle:transition", "lifecycle:failed", "lifecycle:state"
#: transitions that run in the transition thread (the slow ones)
_THREADED_STATES = (State.TRANSITION_STATE_CONFIGURING,)

SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE
__all__ = ["AUTOSTART", "FAILURE", "SUCCESS", "PredrelLifecycleNode", "TransitionCallbackReturn"]


class _HeldResponseService(Service):
    """The change_state service, whose response the node may send later (when a threaded transition
    ends) instead of when the callback returns."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._held: dict[int, Any] = {}   # id(response) -> response, until the executor passes its header
        self._headers: dict[int, Any] = {}

    def hold(self, response) -> None:
        self._held[id(response)] = response

    def send_response(self, response, header) -> None:   # executor thread, right after the callback
        if id(response) in self._held:
            self._headers[id(response)] = header
            return
        super().send_response(response, header)

    def release(self, response) -> None:                   # executor thread, when the transition ended
        self._held.pop(id(response), None)
        header = self._headers.pop(id(response), None)
        if header is not None:
            super().send_response(response, header)


class PredrelLifecycleNode(LifecycleNodeMixin, PredrelNode):
    def __init__(self, node_name: str, parameters: Sequence[ParameterSpec], *,
                 on_parameters: Callable[[dict[str, Any]], None] | None = None, **node_kwargs) -> None:
        if AUTOSTART.name not in {spec.name for spec in parameters}:
            parameters = (AUTOSTART, *parameters)
        PredrelNode.__init__(self, node_name, parameters, on_parameters=on_parameters, **node_kwargs)
        LifecycleNodeMixin.__init__(self, enable_communication_interface=True)
        self._replace_change_state_service()
        self._busy = False                                  # a transition is running
        self._thread: threading.Thread | None = None
        self._threaded_result: tuple | None = None          # (code, initial state, on_done) from the thread
        self._progress = ""
        self._done_guard = self.create_guard_condition(self._threaded_transition_ended)
        self.last_transition_error = ""
        self._note_state()
        if self.params["autostart"]:
            self._autostart_timer = self.create_timer(0.0, self._autostart)

    # -- state -------------------------------------------------------------------------------------
    @property
    def lifecycle_state(self) -> str:
        """The current state's label: unconfigured, configuring, inactive, active, ..., finalized."""
        return self._state_machine.current_state[1]

    def _note_state(self) -> None:
        """A node that is not active says so first in its /diagnostics message (level OK: it may be
        meant to wait for a lifecycle manager)."""
        state = self.lifecycle_state
        if state == "active":
            self.health.clear(_STATE)
        else:
            self.health.raise_condition(_STATE, OK, f"{state}, not processing")

    def configure_progress(self, text: str) -> None:
        """What a running configure does now ("loading model X"), for /diagnostics (any thread)."""
        self._progress = text
        self.health.raise_condition(_TRANSITION, WARN, f"configuring: {text}")
        self.get_logger().info(f"configuring: {text}")

    # -- transitions -------------------------------------------------------------------------------
    def _autostart(self) -> None:
        self.destroy_timer(self._autostart_timer)
        if self.lifecycle_state != "unconfigured":
            return

        def activate(ok: bool) -> None:
            if ok:
                self.start_transition(Transition.TRANSITION_ACTIVATE)
        self.start_transition(Transition.TRANSITION_CONFIGURE, activate)

    def start_transition(self, transition_id: int, on_done: Callable[[bool], None] | None = None) -> bool:
        """Start a transition (executor thread); `on_done(success)` runs when it ended, at once for
        a quick one, on the executor thread when a threaded one ends. False: refused at once."""
        on_done = on_done or (lambda ok: None)
        if self._busy:
            self.log_throttled("lifecycle.refused", f"transition {transition_id} refused: another transition is "
                               f"running (state {self.lifecycle_state})", error=True)
            on_done(False)
            return False
        initial = self._state_machine.current_state
        try:
            self._state_machine.trigger_transition_by_id(transition_id, True)
        except _rclpy.RCLError:
            self.log_throttled("lifecycle.impossible", f"transition {transition_id} is not possible from state "
                               f"{initial[1]}", error=True)
            on_done(False)
            return False
        previous = LifecycleState(state_id=initial[0], label=initial[1])
        state_id, label = self._state_machine.current_state
        self._busy = True
        self.health.raise_condition(_TRANSITION, WARN, label)
        if state_id in _THREADED_STATES:
            def run() -> None:
                code = self._run_callback(state_id, previous)
                self._threaded_result = (code, previous, on_done)
                try:
                    self._done_guard.trigger()
                except Exception:  # the node was destroyed meanwhile: nobody waits for the result
                    pass
            self._thread = threading.Thread(target=run, name=f"{self.get_name()} {label}", daemon=True)
            self._thread.start()
        else:
            self._end_transition(self._run_callback(state_id, previous), previous, on_done)
        return True

    def _run_callback(self, state_id: int, previous: LifecycleState) -> TransitionCallbackReturn:
        callback = self._callbacks.get(state_id)
        if callback is None:
            return SUCCESS
        label = self._state_machine.current_state[1]
        try:
            code = callback(previous)
        except Exception as error:   # rclpy would swallow it: say what happened
            self.last_transition_error = f"{label} failed: {error}"
            self.get_logger().error(f"{label} failed: {error!r}\n{traceback.format_exc()}")
            return TransitionCallbackReturn.ERROR
        if code != SUCCESS and not self.last_transition_error:
            self.last_transition_error = f"{label} failed"
        return code

    def _threaded_transition_ended(self) -> None:
        result, self._threaded_result = self._threaded_result, None
        if result is not None:
            self._end_transition(*result)

    def _end_transition(self, code, previous: LifecycleState, on_done: Callable[[bool], None]) -> None:
        try:
            self._state_machine.trigger_transition_by_label(code.to_label(), True)
            if code == TransitionCallbackReturn.ERROR:   # now in errorprocessing: on_error decides
                self._state_machine.trigger_transition_by_label(
                    self._run_callback(self._state_machine.current_state[0], previous).to_label(), True)
        except _rclpy.RCLError as error:
            self.get_logger().error(f"could not complete the transition: {error}; state {self.lifecycle_state}")
            code = TransitionCallbackReturn.ERROR
        finally:
            self._busy = False
            self._progress = ""
            self.health.clear(_TRANSITION)
            self._note_state()
        if code == SUCCESS:
            self.health.clear(_FAILED)
            self.last_transition_error = ""
            self.get_logger().info(f"lifecycle: {self.lifecycle_state}")
        else:
            self.health.raise_condition(_FAILED, ERROR, f"{self.last_transition_error or 'transition failed'}; "
                                        f"state {self.lifecycle_state}")
            self.get_logger().error(f"lifecycle: {self.last_transition_error or 'transition failed'}; "
                                    f"state {self.lifecycle_state}")
        on_done(code == SUCCESS)

    # -- the change_state service ------------------------------------------------------------------
    def _replace_change_state_service(self) -> None:
        old = self._service_change_state
        self._services.remove(old)
        impl = self._state_machine.service_change_state
        self._service_change_state = _HeldResponseService(
            impl, lifecycle_msgs.srv.ChangeState, impl.name, self._on_change_state, old.callback_group,
            QoSProfile(**impl.qos))
        old.callback_group.add_entity(self._service_change_state)
        self._services.append(self._service_change_state)

    def _on_change_state(self, request, response):
        transition_id = request.transition.id
        if request.transition.label:
            try:
                transition_id = self._state_machine.get_transition_by_label(request.transition.label)
            except _rclpy.RCLError:
                self.log_throttled("lifecycle.unknown", f"change_state: no transition {request.transition.label!r} "
                                   f"from state {self.lifecycle_state}", error=True)
                response.success = False
                return response
        service = self._service_change_state
        ended = []

        def done(ok: bool) -> None:
            response.success = ok
            if ended is None:           # a threaded transition: the response was held
                service.release(response)
            else:
                ended.append(ok)
        self.start_transition(transition_id, done)
        if not ended:                   # still running in the transition thread
            ended = None
            service.hold(response)
        return response

    # -- diagnostics and shutdown ------------------------------------------------------------------
    def lifecycle_values(self) -> Mapping[str, object]:
        values: dict[str, object] = {"lifecycle": self.lifecycle_state}
        if self._progress:
            values["lifecycle.progress"] = self._progress
        if self.last_transition_error:
            values["lifecycle.error"] = self.last_transition_error
        return values

    def destroy_node(self) -> None:
        if getattr(self, "_destroyed", False):   # a test's finally and its executor fixture
            return
        self._destroyed = True
        thread = self._thread
        if thread is not None and thread.is_alive():
            self.get_logger().warning(f"shutting down while configuring: waiting up to {CONFIGURE_JOIN_S:g} s")
            thread.join(CONFIGURE_JOIN_S)
            self._threaded_transition_ended()
        if not self._busy and self.lifecycle_state in ("unconfigured", "inactive", "active"):
            transition = {"unconfigured": Transition.TRANSITION_UNCONFIGURED_SHUTDOWN,
                          "inactive": Transition.TRANSITION_INACTIVE_SHUTDOWN,
                          "active": Transition.TRANSITION_ACTIVE_SHUTDOWN}[self.lifecycle_state]
            self.start_transition(transition)
        super().destroy_node()

