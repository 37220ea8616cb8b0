"""The package version, in one place below every layer (``nlgscore.__version__`` re-exports it;
signatures and caches read it here, never through the package façade).

>>> __version__.count(".") >= 2
True
"""

__version__ = "0.4.0"
