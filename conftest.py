# Repository-level pytest configuration: kept empty on purpose. Test helpers live in tests/conftest.py.
