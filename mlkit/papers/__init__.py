"""One folder per paper, each of the same shape: ``__init__`` (its docstring and
``CITATION``), ``data`` (its own generators and loaders), ``renderers`` (its tables and
figures) and ``claims`` (with ``claims.yaml``)."""
