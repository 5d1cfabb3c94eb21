"""The one error of the analytics package: bad input, named by column and problem."""


class AnalyticsError(ValueError):
	"""Raised for input an analysis cannot use; the message names the column and the problem.

	Callers (the CLI, the tools) show the message as it is: it is written for a person.
	"""
