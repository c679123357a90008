"""The sans-I/O kernel: snapshot in, report out. Imports nothing else of bot/ or rules/."""
