"""Every command's result model: light (pydantic only), rendered by type on every surface."""
