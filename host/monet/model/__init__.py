"""System models fed with measured figures (issue 15): the switch-plane topology, power and energy, and the
FMU message-buffer model. Pure Python; each model takes a dict (a YAML file's contents) and returns a
JSON-ready dict that `monet model` stores and reports like a campaign."""


class ModelInputError(ValueError):
    """A model input a user gave is wrong: the message names the key, the value and what would be accepted."""
