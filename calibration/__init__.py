"""Calibration: camera intrinsics (ChArUco), board fit, colour samples, LED map.

Everything ends up in one versioned calibration file (calibration.file).
"""
