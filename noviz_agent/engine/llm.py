"""Old home of the provider types; they live in `noviz_agent.engine.provider` now.

Kept as a re-export only so that code written against this path on other branches keeps
importing while they are merged; new code imports from `noviz_agent.engine.provider`.
"""

from noviz_agent.engine.provider import *  # noqa: F403
from noviz_agent.engine.provider import ProviderSettings, __all__  # noqa: F401

ModelSettings = ProviderSettings
