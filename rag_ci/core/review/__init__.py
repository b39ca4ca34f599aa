"""The human loop: accepted regressions, audit samples, judge calibration, imported questions."""
