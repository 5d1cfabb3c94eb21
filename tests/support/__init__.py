"""Test support shared by every test package: the in-memory connector and session factories."""
