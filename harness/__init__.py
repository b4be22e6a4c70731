"""ahp-fuzz: a fuzzing and property-testing harness for the Agent Host Protocol."""

__version__ = "0.1.0"
