"""The GitHub App: everything `ci-stability serve` runs."""
