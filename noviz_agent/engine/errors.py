"""Named errors of the engine. Tool errors go back to the model as text; limit errors end the turn."""


class ToolError(Exception):
	"""A failure the model can act on: the message says what went wrong and what to do instead.

	`origin` names the other system whose own words the message carries (its refusal, its error):
	text that system's people wrote, as untrusted as its answers (engine/provenance.py).
	"""

	def __init__(self, *args, origin: str | None = None):
		super().__init__(*args)
		self.origin = origin


class PermissionDenied(ToolError):
	"""The system refused the person; the message is the system's own, shown verbatim."""


class NotFound(ToolError):
	"""The record or entity does not exist (or the person cannot see that it does)."""


class ValidationFailed(ToolError):
	"""The system rejected a write; the message is the system's own validation text."""


class TurnLimitError(Exception):
	"""A bound of the turn was reached; the message is shown to the person."""


class StepLimitExceeded(TurnLimitError):
	pass


class TimeLimitExceeded(TurnLimitError):
	pass


class TokenLimitExceeded(TurnLimitError):
	pass


class TurnCancelled(TurnLimitError):
	"""The person stopped the turn; it ends between two steps, before the next model or tool call."""


class ProviderError(Exception):
	"""The model provider failed after retries; the message says what to check."""
