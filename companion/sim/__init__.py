"""The simulated table: a deterministic renderer of the reference board for testing vision.

Main entry points: :func:`sample_photo` (one labelled photo from a seed),
:func:`render` (a given scene, camera and light), :func:`random_camera`.
"""

from companion.sim.camera import CameraModel, look_at_camera, random_camera
from companion.sim.render import Rendered, render
from companion.sim.scene import Hand, Lighting, Scene, random_hand, random_lighting
from companion.sim.scenes import labelled_set, random_board, sample_photo
from companion.sim.sequence import Frame, GameState, render_sequence

__all__ = [
    "CameraModel", "Frame", "GameState", "Hand", "Lighting", "Rendered", "Scene",
    "labelled_set", "look_at_camera", "random_board", "random_camera", "random_hand",
    "random_lighting", "render", "render_sequence", "sample_photo",
]
