"""Development server standing in for Bedrud (REST API) and its embedded LiveKit SFU.

A test and demo tool, not part of the shipped bot. See docs/DEVSERVER.md.
"""
