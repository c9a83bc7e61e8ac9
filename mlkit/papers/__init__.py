"""One module per paper: its targets (tables, figures) and its claims."""
