"""Errors of the harness itself and of scenarios."""


class HarnessError(Exception):
    """A piece the harness needs could not run (missing package, guest did not boot, ...).
    Never a reason to skip: the run fails loudly."""


class ScenarioFailure(Exception):
    """A scenario's expectation was not met. The message says what was expected and what happened."""
