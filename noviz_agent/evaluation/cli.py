"""``noviz-agent eval``: the labelled questions over the seeded data in memory, through the real turn.

The model is the oracle (``--oracle``: proves the labels and the pipeline), the OpenAI-compatible
HTTP stub started on 127.0.0.1 (``--stub``), or any OpenAI-compatible provider (``--base-url``,
``--model``, ``--api-key``, or NOVIZ_BASE_URL, NOVIZ_MODEL, NOVIZ_API_KEY / OPENAI_API_KEY).
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import ExitStack
from pathlib import Path

from noviz_agent.evaluation.harness import EvaluationError, evaluate, load_questions, memory_runner


def register(subparsers) -> None:
	parser = subparsers.add_parser(
		"eval", help="run the labelled questions through the real turn and grade the answers"
	)
	which = parser.add_mutually_exclusive_group()
	which.add_argument("--oracle", action="store_true", help="the scripted oracle model (pipeline check)")
	which.add_argument("--stub", action="store_true", help="the OpenAI-compatible HTTP stub on 127.0.0.1")
	parser.add_argument("--base-url", help="OpenAI-compatible base URL (default: NOVIZ_BASE_URL)")
	parser.add_argument("--model", help="model name (default: NOVIZ_MODEL)")
	parser.add_argument("--api-key", help="API key (default: NOVIZ_API_KEY or OPENAI_API_KEY)")
	parser.add_argument("--questions", type=Path, help="a questions file (default: the shipped set)")
	parser.add_argument("--only", action="append", default=[], help="run only this question id (repeatable)")
	parser.add_argument("--json", type=Path, help="also write every grade and the totals to this file")
	parser.set_defaults(func=run)


def _provider(args, stack: ExitStack, registry_holder: dict):
	"""(name, question -> provider) for the model chosen on the command line."""
	if args.oracle:
		from noviz_agent.evaluation.oracle import oracle_model

		return "oracle", lambda question: oracle_model(question, registry_holder["registry"])
	from noviz_agent.engine.llm import ModelSettings, OpenAICompatibleProvider

	if args.stub:
		from noviz_agent.testing.stub_provider import StubProvider

		stub = stack.enter_context(StubProvider())
		provider = OpenAICompatibleProvider(ModelSettings(stub.base_url, model="stub-model"))
		return "http stub", lambda question: provider
	base_url = args.base_url or os.environ.get("NOVIZ_BASE_URL")
	model = args.model or os.environ.get("NOVIZ_MODEL")
	if not (base_url and model):
		raise EvaluationError(
			"no model to evaluate: pass --base-url and --model (or set NOVIZ_BASE_URL and NOVIZ_MODEL), "
			"or --stub for the local stub, or --oracle to check the labels and the pipeline"
		)
	key = args.api_key or os.environ.get("NOVIZ_API_KEY") or os.environ.get("OPENAI_API_KEY") or ""
	provider = OpenAICompatibleProvider(ModelSettings(base_url, api_key=key, model=model))
	return f"{model} at {base_url}", lambda question: provider


def run(args) -> int:
	try:
		questions = load_questions(args.questions)
		if args.only:
			unknown = set(args.only) - {q["id"] for q in questions}
			if unknown:
				raise EvaluationError(f"no question with id {', '.join(sorted(unknown))}")
			questions = [q for q in questions if q["id"] in args.only]
		with ExitStack() as stack:
			holder: dict = {}
			name, provider_for = _provider(args, stack, holder)
			runner, facts = memory_runner(provider_for)
			holder["registry"] = runner.registry
			report = evaluate(
				questions, facts, runner, provider=name, echo=lambda line: print(line, flush=True)
			)
	except EvaluationError as exc:
		print(f"error: {exc}", file=sys.stderr)
		return 2
	except Exception as exc:  # the promise is one line, never a traceback
		print(f"error: unexpected {type(exc).__name__}: {exc}", file=sys.stderr)
		return 1
	if args.json:
		args.json.write_text(json.dumps(report.to_dict(), indent=1, default=str), encoding="utf-8")
	totals = report.totals()
	return 0 if totals["passed"] == totals["questions"] else 3
