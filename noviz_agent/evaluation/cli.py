"""``noviz-agent eval``: the labelled questions over the seeded data in memory, through the real turn.

The model is the oracle (``--oracle``: proves the labels and the pipeline), the OpenAI-compatible
HTTP stub started on 127.0.0.1 (``--stub``: a rule-based demo, not a model), or any
OpenAI-compatible provider (``--base-url``, ``--model``, ``--api-key``, ``--tool-call-format``, or
NOVIZ_BASE_URL, NOVIZ_MODEL, NOVIZ_API_KEY / OPENAI_API_KEY, NOVIZ_TOOL_CALL_FORMAT).

Nothing is lost when a run goes wrong: the ``--json`` path is checked before the first question,
the grades are written after every question (so an interrupted or failed run keeps what it
paid for), and a provider is asked once before a run of many questions, so an unreachable one
stops the run at once with what to check.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

TOOL_CALL_FORMATS = ("native", "text", "auto")  # as engine.provider.settings, without importing it
STUB_NOTE = (
	"The stub is a rule-based demo, not a model: it lists records when asked about them and proposes "
	"'create a <thing> named <name>'; anything else it answers with a fixed sentence. Its grades show "
	"that the pipeline runs end to end, not how well the agent answers: --oracle checks the labels "
	"and the pipeline, --base-url and --model grade a real model."
)
# Turns in a row that cannot reach the provider before a run stops (it asked once before it began).
UNREACHABLE_IN_A_ROW = 3


class CommandLineError(Exception):
	"""What the command line asked for cannot run (a grades file that cannot be written, a provider
	that does not answer); the message says what to do. The harness's EvaluationError is shown alike."""


def register(subparsers) -> None:
	parser = subparsers.add_parser(
		"eval",
		help="run the labelled questions through the real turn and grade the answers",
		description="The 71 labelled questions (totals, counts, rankings, records, refusals, writes that "
		"must stay proposals) over the seeded company in memory, each through the real turn, graded: "
		"the tools called, the expected figure, every number grounded, refusals exactly when due.",
		epilog="examples:\n"
		"  noviz-agent eval --oracle\n"
		"  noviz-agent eval --base-url http://127.0.0.1:11434/v1 --model qwen2.5:7b --tool-call-format auto "
		"--json grades.json\n"
		"  noviz-agent eval --stub --only revenue-2025",
		formatter_class=argparse.RawDescriptionHelpFormatter,
	)
	which = parser.add_mutually_exclusive_group()
	which.add_argument("--oracle", action="store_true", help="the scripted oracle model (pipeline check)")
	which.add_argument(
		"--stub", action="store_true", help="the OpenAI-compatible HTTP stub on 127.0.0.1 (a rule-based demo)"
	)
	add_provider_options(parser)
	parser.add_argument("--questions", type=Path, help="a questions file (default: the shipped set)")
	parser.add_argument("--only", action="append", default=[], help="run only this question id (repeatable)")
	parser.add_argument(
		"--json", type=Path, help="write every grade and the totals to this file (after each question)"
	)
	parser.set_defaults(func=run)


def add_provider_options(parser: argparse.ArgumentParser) -> None:
	"""The options that name an OpenAI-compatible provider (each with its environment variable)."""
	parser.add_argument("--base-url", help="OpenAI-compatible base URL (default: NOVIZ_BASE_URL)")
	parser.add_argument("--model", help="model name (default: NOVIZ_MODEL)")
	parser.add_argument("--api-key", help="API key (default: NOVIZ_API_KEY or OPENAI_API_KEY)")
	parser.add_argument(
		"--tool-call-format",
		choices=TOOL_CALL_FORMATS,
		help="how the model sends tool calls: native (structured, the default), text (also calls printed "
		"as text, as many local models do) or auto (default: NOVIZ_TOOL_CALL_FORMAT)",
	)
	parser.add_argument(
		"--strict-tools", action="store_true", help="send tools as strict function tools (OpenAI, vLLM)"
	)


def provider_from(args) -> tuple[str, object] | None:
	"""(name, provider) for the provider named by the options or the environment; None when none is."""
	base_url = args.base_url or os.environ.get("NOVIZ_BASE_URL")
	model = args.model or os.environ.get("NOVIZ_MODEL")
	if not (base_url or model):
		return None
	if not (base_url and model):
		missing = "--model (or NOVIZ_MODEL)" if base_url else "--base-url (or NOVIZ_BASE_URL)"
		raise CommandLineError(f"a provider needs a base URL and a model: add {missing}")
	from noviz_agent.engine.provider import OpenAICompatibleProvider, ProviderSettings, SettingsError

	key = args.api_key or os.environ.get("NOVIZ_API_KEY") or os.environ.get("OPENAI_API_KEY") or ""
	fmt = args.tool_call_format or os.environ.get("NOVIZ_TOOL_CALL_FORMAT") or "native"
	try:
		settings = ProviderSettings(
			base_url, api_key=key, model=model, tool_call_format=fmt, strict_tools=args.strict_tools
		)
	except SettingsError as exc:
		raise CommandLineError(command_line_words(str(exc))) from None
	return f"{model} at {base_url}", OpenAICompatibleProvider(settings)


def command_line_words(message: str) -> str:
	"""A settings message as it applies on the command line (options, not the Agent Settings form)."""
	return (
		message.replace("Agent Settings (reasoning model): the base URL", "the base URL (--base-url)")
		.replace("Agent Settings (reasoning model): the model name", "the model name (--model)")
		.replace("Agent Settings (reasoning model): ", "")
	)


HINTS = {
	"auth": "Check the API key: --api-key, or NOVIZ_API_KEY / OPENAI_API_KEY.",
	"not_found": "Check the model name (--model or NOVIZ_MODEL) and the base URL (--base-url or NOVIZ_BASE_URL).",
	"timeout": "Check that the server is running and that the base URL (--base-url or NOVIZ_BASE_URL) is right.",
}
HINT = (
	"Check that the server is running and that the base URL (--base-url or NOVIZ_BASE_URL) is right; "
	"it usually ends in /v1."
)


def check_provider(provider, *, hint: Callable[[str], str] | None = None) -> None:
	"""Ask the provider one short question, once, without retries; CommandLineError says what to check.

	A provider that limits requests (HTTP 429) is there: the run goes ahead."""
	from noviz_agent.engine.provider import OpenAICompatibleProvider, ProviderFailure

	if not isinstance(provider, OpenAICompatibleProvider):
		return
	once = OpenAICompatibleProvider(
		dataclasses.replace(provider.settings, max_retries=0, timeout=min(provider.settings.timeout, 30.0))
	)
	try:
		once.complete([{"role": "user", "content": "Reply with the word OK."}], [])
	except ProviderFailure as exc:
		if exc.kind == "rate_limit":
			return
		said = str(exc)
		cut = said.find(" Check ")
		what = (said[:cut] if cut > 0 else said).rstrip(".")
		advice = hint(exc.kind) if hint else HINTS.get(exc.kind, HINT)
		raise CommandLineError(f"{what}. Nothing was run. {advice}") from None


def check_writable(path: Path | None) -> Path | None:
	"""The grades file, checked before anything runs: its folder exists and it can be written."""
	if path is None:
		return None
	path = Path(path).expanduser()
	if path.is_dir():
		raise CommandLineError(f"cannot write the grades to {path}: it is a folder; name a file in it")
	if not path.parent.is_dir():
		raise CommandLineError(
			f"cannot write the grades to {path}: the folder {path.parent} does not exist (create it first)"
		)
	if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
		raise CommandLineError(f"cannot write the grades to {path}: permission denied")
	return path


def _write(path: Path | None, report, *, complete: bool, note: str | None = None) -> None:
	if path is None:
		return
	payload = {**report.to_dict(), "complete": complete}
	if note:
		payload["note"] = note
	partial = path.with_name(f".{path.name}.part")
	partial.write_text(json.dumps(payload, indent=1, default=str), encoding="utf-8")
	os.replace(partial, path)  # a reader never sees half a file


def stub_line(grade) -> str:
	"""One question through the stub: what it did, without calling a demo's miss a product failure."""
	tools = ", ".join(grade.tools_called) or "none"
	verdict = "as labelled" if grade.success else "not as labelled"
	line = f"[stub] {grade.id:<28} {grade.person:<9} tools: {tools} | {verdict} | {grade.tokens} tokens, {grade.seconds:.2f} s"
	return line + (f"\n       error: {grade.error[:200]}" if grade.error else "")


def run_graded(
	questions, facts, runner, *, provider: str, json_path: Path | None, stub: bool = False, echo=print
):
	"""Grade the questions one by one, writing the grades after each; (report, finished).

	Ctrl-C, or a provider that stops answering, ends the run with the grades so far written."""
	from noviz_agent.evaluation.harness import Report, evaluate, format_grade, format_totals

	report = Report([], provider)
	note = STUB_NOTE if stub else None
	if stub:
		echo(STUB_NOTE)
	unreachable = 0
	try:
		for question in questions:
			grade = evaluate([question], facts, runner, provider=provider, echo=None).grades[0]
			report.grades.append(grade)
			echo(stub_line(grade) if stub else format_grade(grade))
			_write(json_path, report, complete=False, note=note)
			unreachable = unreachable + 1 if _unreachable(grade.error) else 0
			if unreachable >= UNREACHABLE_IN_A_ROW:
				echo(
					f"stopped: the model provider did not answer {unreachable} questions in a row; "
					f"{len(report.grades)} of {len(questions)} questions graded."
				)
				return report, False
	except KeyboardInterrupt:
		where = f"; the grades so far are in {json_path}" if json_path else ""
		echo(f"interrupted after {len(report.grades)} of {len(questions)} questions{where}")
		_write(json_path, report, complete=False, note=note)
		raise
	totals = report.totals()
	if stub:
		echo(
			f"{totals['questions']} questions, provider http stub (a rule-based demo, not a model): "
			f"{totals['passed']} answered as labelled, {totals['errors']} turns failed."
		)
	else:
		for line in format_totals(totals):
			echo(line)
	_write(json_path, report, complete=True, note=note)
	return report, True


def _unreachable(error: str | None) -> bool:
	return bool(error) and ("Could not connect to the model provider" in error or "timed out after" in error)


def exit_code(report, finished: bool, *, stub: bool = False) -> int:
	"""0 when every question passed (with the stub: when no turn failed), 3 otherwise."""
	totals = report.totals()
	if not finished:
		return 3
	if stub:
		return 0 if totals["errors"] == 0 else 3
	return 0 if totals["passed"] == totals["questions"] else 3


def _provider(args, stack: ExitStack, registry_holder: dict):
	"""(name, question -> provider) for the model chosen on the command line."""
	if args.oracle:
		from noviz_agent.evaluation.oracle import oracle_model

		return "oracle", lambda question: oracle_model(question, registry_holder["registry"])
	from noviz_agent.engine.provider import OpenAICompatibleProvider, ProviderSettings

	if args.stub:
		from noviz_agent.testing.stub_provider import StubProvider

		stub = stack.enter_context(StubProvider())
		fmt = args.tool_call_format or "native"
		provider = OpenAICompatibleProvider(
			ProviderSettings(stub.base_url, model="stub-model", tool_call_format=fmt)
		)
		return "http stub", lambda question: provider
	chosen = provider_from(args)
	if chosen is None:
		raise CommandLineError(
			"no model to evaluate: pass --base-url and --model (or set NOVIZ_BASE_URL and NOVIZ_MODEL), "
			"or --stub for the local stub, or --oracle to check the labels and the pipeline"
		)
	name, provider = chosen
	check_provider(provider)
	return name, lambda question: provider


def run(args) -> int:
	from noviz_agent.evaluation.harness import EvaluationError, load_questions, memory_runner

	try:
		json_path = check_writable(args.json)
		questions = load_questions(args.questions)
		if args.only:
			unknown = set(args.only) - {q["id"] for q in questions}
			if unknown:
				raise CommandLineError(f"no question with id {', '.join(sorted(unknown))}")
			questions = [q for q in questions if q["id"] in args.only]
		with ExitStack() as stack:
			holder: dict = {}
			name, provider_for = _provider(args, stack, holder)
			runner, facts = memory_runner(provider_for)
			holder["registry"] = runner.registry
			report, finished = run_graded(
				questions,
				facts,
				runner,
				provider=name,
				json_path=json_path,
				stub=args.stub,
				echo=lambda line: print(line, flush=True),
			)
	except (CommandLineError, EvaluationError) as exc:
		print(f"error: {exc}", file=sys.stderr)
		return 2
	except (BrokenPipeError, KeyboardInterrupt):
		raise
	except Exception as exc:  # the promise is one line, never a traceback
		print(f"error: unexpected {type(exc).__name__}: {exc}", file=sys.stderr)
		return 1
	return exit_code(report, finished, stub=args.stub)
