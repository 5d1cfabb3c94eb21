"""The model's HTTP client is built once per process and reused by every turn (its TLS context too).

Building an `openai.OpenAI` client reads the CA bundle into a new TLS context (about 40 ms of
CPU a turn, measured by benchmarks/turn_profile.py); the provider a turn builds takes the
process's client for the same settings instead.
"""

from __future__ import annotations

from noviz_agent.engine.provider import OpenAICompatibleProvider, ProviderSettings
from noviz_agent.engine.provider.openai_compatible import PLACEHOLDER_KEY

URL = "http://127.0.0.1:9/v1"


def test_a_provider_built_for_each_turn_reuses_the_process_client_and_its_tls_context():
	one = OpenAICompatibleProvider(ProviderSettings(URL, api_key="sk-a", model="m"))
	two = OpenAICompatibleProvider(ProviderSettings(URL, api_key="sk-a", model="other-model"))
	assert one is not two
	assert one.client is two.client
	assert one.client._client is two.client._client  # the httpx client: connections and TLS context


def test_a_kept_client_never_carries_a_key_to_other_settings():
	a = OpenAICompatibleProvider(ProviderSettings(URL, api_key="sk-a", model="m"))
	b = OpenAICompatibleProvider(ProviderSettings(URL, api_key="sk-b", model="m"))
	elsewhere = OpenAICompatibleProvider(ProviderSettings("http://127.0.0.1:8/v1", api_key="sk-a", model="m"))
	keyless = OpenAICompatibleProvider(ProviderSettings(URL, model="m"))
	assert len({id(p.client) for p in (a, b, elsewhere, keyless)}) == 4
	assert (a.client.api_key, b.client.api_key, keyless.client.api_key) == ("sk-a", "sk-b", PLACEHOLDER_KEY)
	assert str(elsewhere.client.base_url).startswith("http://127.0.0.1:8/")


def test_a_kept_client_is_chosen_by_headers_and_timeout_too():
	plain = OpenAICompatibleProvider(ProviderSettings(URL, model="m"))
	headed = OpenAICompatibleProvider(ProviderSettings(URL, model="m", extra_headers={"X-Org": "1"}))
	slow = OpenAICompatibleProvider(ProviderSettings(URL, model="m", timeout=plain.settings.timeout + 30))
	assert headed.client is not plain.client and slow.client is not plain.client
	assert headed.client.default_headers.get("X-Org") == "1"
	assert slow.client.timeout == plain.settings.timeout + 30


def test_the_body_posted_as_is_equals_what_the_sdks_create_sends():
	from noviz_agent.testing.stub_provider import StubProvider

	tools = [
		{
			"type": "function",
			"function": {
				"name": "customer__list",
				"description": "List customers.",
				"parameters": {"type": "object", "properties": {"limit": {"type": "integer"}}},
			},
		}
	]
	messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "List customers"}]
	with StubProvider(rules=False) as stub:
		stub.push(text="one").push(text="two")
		settings = ProviderSettings(
			stub.base_url, model="m", temperature=0.1, max_tokens=300, extra_body={"top_k": 20}
		)
		provider = OpenAICompatibleProvider(settings)
		assert provider.complete(messages, tools).text == "one"
		request = provider.request(messages, tools)
		provider.client.chat.completions.create(**request, timeout=30)
		posted, created = stub.chat_requests
	assert posted == created
	assert posted["top_k"] == 20 and posted["tools"] == request["tools"] and "extra_body" not in posted


def test_clients_for_different_settings_read_the_ca_certificates_once(monkeypatch):
	import ssl

	from noviz_agent.engine.provider import openai_compatible

	reads = []
	for method in ("load_default_certs", "load_verify_locations"):
		original = getattr(ssl.SSLContext, method)

		def counting(self, *args, _original=original, _method=method, **kwargs):
			reads.append(_method)
			return _original(self, *args, **kwargs)

		monkeypatch.setattr(ssl.SSLContext, method, counting)
	openai_compatible.tls_context.cache_clear()
	openai_compatible.shared_client.cache_clear()
	clients = [
		OpenAICompatibleProvider(ProviderSettings(URL, api_key=f"sk-{n}", model="m")).client for n in range(3)
	]
	assert len({id(c) for c in clients}) == 3
	assert len(reads) == 1, reads  # one TLS context for the process, not one per client
