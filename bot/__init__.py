"""ci-stability-bot: reviews pull requests that change CI-stability surfaces."""

__version__ = "0.1.0"
