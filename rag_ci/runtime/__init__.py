"""The process: signals, progress, the exit without the interpreter's teardown."""
