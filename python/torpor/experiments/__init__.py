"""Built-in experiments, one module per seed document they reproduce."""
