"""The in-memory connector now ships in the package (the evaluation harness uses it); tests import it from here too."""

from noviz_agent.testing.memory_connector import *  # noqa: F401
from noviz_agent.testing.memory_connector import ALL_PERMISSIONS, MemoryConnector  # noqa: F401
