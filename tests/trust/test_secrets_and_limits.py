"""Keys go only where the administrator sent them; a turn in a web request ends before the worker dies."""

from __future__ import annotations

import pytest

from noviz_agent.validation import embedding_endpoint, turn_seconds

MAIN = {"base_url": "https://api.example.com/v1", "api_key": "sk-main-secret"}


@pytest.mark.attack("secrets")
def test_main_key_is_never_sent_to_another_embedding_host():
	url, key = embedding_endpoint({**MAIN, "embedding_base_url": "https://embed.other.example/v1"})
	assert url == "https://embed.other.example/v1"
	assert key is None


def test_embedding_on_the_main_provider_borrows_its_key():
	assert embedding_endpoint(MAIN) == ("https://api.example.com/v1", "sk-main-secret")
	same = {**MAIN, "embedding_base_url": "https://api.example.com/v1/"}
	assert embedding_endpoint(same) == ("https://api.example.com/v1", "sk-main-secret")


def test_an_embedding_key_of_its_own_is_used():
	values = {**MAIN, "embedding_base_url": "http://127.0.0.1:9/v1", "embedding_api_key": "emb"}
	assert embedding_endpoint(values) == ("http://127.0.0.1:9/v1", "emb")


def test_nothing_configured_means_no_endpoint():
	assert embedding_endpoint({}) == (None, None)


@pytest.mark.parametrize(
	"configured, web, expected",
	[(900, None, 105.0), (60, None, 60.0), (900, 300, 285.0), (30, 20, 5.0), (120, 120, 105.0)],
)
def test_turn_limit_stays_below_the_web_worker_timeout(configured, web, expected):
	assert turn_seconds(configured, web) == expected
