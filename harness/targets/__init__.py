"""What the harness runs against: reference (in-process), adapter, typescript, live."""
