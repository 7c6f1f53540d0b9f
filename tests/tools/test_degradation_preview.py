import numpy as np

from predrel_ros.tools.degradation_preview import contact_sheet

IMAGE = np.random.default_rng(0).integers(0, 256, (60, 80, 3), dtype=np.uint8)


def test_sheet_has_a_row_per_degradation_and_a_column_per_severity():
    sheet = contact_sheet(IMAGE, seed=1, cell_width=80)
    without_boxes = sheet.shape
    # 8 rows (blur, occlusion, occlusion_flat, 3 illumination variants, low_resolution, frame_drop
    # timeline) of a 30-pixel caption + 60-pixel cell, separated by 4 pixels; 150-pixel name column + 6 x (4 + 80)
    assert without_boxes == (8 * 90 + 7 * 4, 150 + 6 * 84, 3)
    with_boxes = contact_sheet(IMAGE, seed=1, boxes=np.array([[5, 5, 40, 30]]), cell_width=80)
    assert with_boxes.shape == (9 * 90 + 8 * 4, 150 + 6 * 84, 3)
    # the severity-0 cell of the first row is the clean frame
    np.testing.assert_array_equal(sheet[30:90, 154:234], IMAGE)


def test_grey_images_and_scaled_cells():
    grey = IMAGE[..., 1].copy()
    sheet = contact_sheet(grey, cell_width=40)
    assert sheet.ndim == 3 and sheet.shape[1] == 150 + 6 * 44
