import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from predrel_ros.tools.figures import save_figure  # noqa: E402


def test_save_figure_makes_the_folder_writes_a_png_and_closes_the_figure(tmp_path):
    figure, axes = plt.subplots()
    axes.plot([0, 1], [1, 0])
    path = save_figure(figure, tmp_path / "new" / "plot.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.fignum_exists(figure.number)
