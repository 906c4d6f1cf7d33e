"""Manhattan table companion: rules, vision, hardware and the table page."""

__version__ = "0.1.0"
