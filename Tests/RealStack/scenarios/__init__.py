"""Real-stack scenarios. Every module here is imported by the runner; each function decorated with
``@scenario`` (harness.core) is one named test. To add one, create a module here — see
docs/realstack.md, "Adding a scenario"."""
