"""When a goal runs: every day, week or month at an hour, or a cron expression; the next time after a moment.

Every schedule is a cron expression underneath (the one frappe's scheduler reads too), evaluated
by croniter in the site's time zone: naive datetimes, as `frappe.utils.now_datetime()` gives them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from croniter import croniter

EVERY = ("day", "week", "month", "cron")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


class ScheduleError(ValueError):
	"""A schedule that cannot run; the message says what to change."""


@dataclass(frozen=True)
class Schedule:
	every: str = "week"
	hour: int = 8
	weekday: str = "monday"  # for "week"
	day: int = 1  # for "month": 1-28, so every month has it
	cron: str = ""  # for "cron"

	@classmethod
	def from_dict(cls, raw: dict | None) -> Schedule:
		raw = dict(raw or {})
		every = str(raw.get("every") or "week").strip().lower()
		try:
			schedule = cls(
				every=every,
				hour=int(raw["hour"]) if raw.get("hour") not in (None, "") else 8,
				weekday=str(raw.get("weekday") or "monday").strip().lower(),
				day=int(raw["day"]) if raw.get("day") not in (None, "") else 1,
				cron=" ".join(str(raw.get("cron") or "").split()),
			)
		except (TypeError, ValueError):
			raise ScheduleError("The schedule's hour and day must be whole numbers.") from None
		schedule.check()
		return schedule

	def to_dict(self) -> dict:
		out: dict = {"every": self.every}
		if self.every == "cron":
			out["cron"] = self.cron
			return out
		out["hour"] = self.hour
		if self.every == "week":
			out["weekday"] = self.weekday
		if self.every == "month":
			out["day"] = self.day
		return out

	def check(self) -> None:
		if self.every not in EVERY:
			raise ScheduleError(
				f"A goal runs every {', '.join(EVERY[:3])}, or on a cron expression; not {self.every!r}."
			)
		if self.every == "cron":
			if not self.cron or not croniter.is_valid(self.cron):
				raise ScheduleError(
					f"{self.cron!r} is not a cron expression; write five fields, e.g. '0 8 * * 1' for Mondays at 08:00."
				)
			return
		if not 0 <= self.hour <= 23:
			raise ScheduleError(f"The hour is 0 to 23, not {self.hour}.")
		if self.every == "week" and self.weekday not in WEEKDAYS:
			raise ScheduleError(f"The weekday is one of {', '.join(WEEKDAYS)}, not {self.weekday!r}.")
		if self.every == "month" and not 1 <= self.day <= 28:
			raise ScheduleError(f"The day of the month is 1 to 28 (every month has it), not {self.day}.")

	@property
	def expression(self) -> str:
		"""The cron expression of this schedule."""
		if self.every == "cron":
			return self.cron
		if self.every == "day":
			return f"0 {self.hour} * * *"
		if self.every == "week":
			# cron counts Sunday as 0
			return f"0 {self.hour} * * {(WEEKDAYS.index(self.weekday) + 1) % 7}"
		return f"0 {self.hour} {self.day} * *"

	def next_after(self, moment: dt.datetime) -> dt.datetime:
		"""The first time this schedule fires strictly after `moment`."""
		return croniter(self.expression, moment).get_next(dt.datetime)

	def describe(self) -> str:
		if self.every == "cron":
			return f"on the schedule '{self.cron}'"
		at = f"at {self.hour:02d}:00"
		if self.every == "day":
			return f"every day {at}"
		if self.every == "week":
			return f"every {self.weekday.capitalize()} {at}"
		suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd"}.get(self.day, "th")
		return f"on the {self.day}{suffix} of every month {at}"
