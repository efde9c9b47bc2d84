"""The table and its attribute roles: reading, validating, encoding; the bundled samples."""
