"""Embedders: anything with ``name``, ``dimension`` and ``embed(texts) -> vectors``.

``OpenAIEmbedder`` talks to any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, Azure,
a local server) through the ``openai`` SDK. ``builtin_embedder()`` is the local model used when no
embedding provider is configured: WordLlama's 256-dimension model, shipped inside the
``wordllama`` wheel, on the CPU with numpy, never downloading (knowledge search wraps it in
``ContentWordsEmbedder``). ``HashingEmbedder`` is deterministic and needs
no provider: it hashes words into a fixed number of buckets, so it matches shared words,
not meanings — tests and benchmarks use it where a real model is not available.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import re
import threading
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import Stemmer

from knowledge.errors import EmbeddingError

DEFAULT_BATCH_SIZE = 64


@runtime_checkable
class Embedder(Protocol):
	"""What the indexer and search need from an embedding model."""

	name: str
	dimension: int
	batch_size: int

	def embed(self, texts: list[str]) -> list[list[float]]: ...


class OpenAIEmbedder:
	"""An OpenAI-compatible embedding model; ``base_url``, ``api_key`` and ``model`` come from settings."""

	def __init__(
		self,
		model: str,
		*,
		base_url: str | None = None,
		api_key: str | None = None,
		dimension: int | None = None,
		batch_size: int = DEFAULT_BATCH_SIZE,
		timeout: float = 30.0,
		max_retries: int = 2,
		client=None,
	):
		if not model:
			raise EmbeddingError("no embedding model configured: set the model name in Agent Settings")
		self.model = model
		self.base_url = base_url
		self.batch_size = max(1, int(batch_size))
		self._dimension = dimension
		if client is None:
			from openai import OpenAI

			# Local OpenAI-compatible servers often need no key, but the SDK insists on one.
			client = OpenAI(
				base_url=base_url or None,
				api_key=api_key or "not-needed",
				timeout=timeout,
				max_retries=max_retries,
			)
		self._client = client

	@property
	def name(self) -> str:
		return f"openai:{self.model}"

	@property
	def dimension(self) -> int:
		if self._dimension is None:
			# Asking once is cheaper than making every deployment look the number up.
			self._dimension = len(self.embed(["dimension probe"])[0])
		return self._dimension

	def embed(self, texts: list[str]) -> list[list[float]]:
		vectors: list[list[float]] = []
		for start in range(0, len(texts), self.batch_size):
			vectors.extend(self._embed_batch(texts[start : start + self.batch_size]))
		return vectors

	def _embed_batch(self, batch: list[str]) -> list[list[float]]:
		where = f"model {self.model!r}" + (f" at {self.base_url}" if self.base_url else "")
		try:
			response = self._client.embeddings.create(model=self.model, input=batch)
		except Exception as exc:  # the SDK raises many types; all mean the same to the indexer
			raise EmbeddingError(f"embedding provider failed ({where}): {_describe(exc)}") from exc
		data = sorted(response.data, key=lambda item: item.index)
		if len(data) != len(batch):
			raise EmbeddingError(
				f"embedding provider returned {len(data)} vectors for {len(batch)} texts ({where})"
			)
		vectors = [list(item.embedding) for item in data]
		width = self._dimension or len(vectors[0])
		if any(len(vector) != width for vector in vectors):
			raise EmbeddingError(
				f"embedding provider returned vectors of mixed sizes, expected {width} ({where})"
			)
		self._dimension = width
		return vectors


BUILTIN_CONFIG = "l2_supercat"
BUILTIN_DIMENSION = 256


class BuiltinEmbedder:
	"""WordLlama's static token embeddings, mean-pooled as the package pools them, unit length."""

	name = f"wordllama-{BUILTIN_CONFIG}-{BUILTIN_DIMENSION}"
	dimension = BUILTIN_DIMENSION
	batch_size = 256

	def __init__(self, model):
		self._model = model

	def embed(self, texts: list[str]) -> list[list[float]]:
		if not texts:
			return []
		# A text with no tokens would pool to 0/0; a placeholder word keeps every vector finite.
		prepared = [text if (text or "").strip() else "empty" for text in texts]
		vectors = np.asarray(self._model.embed(prepared, norm=False, batch_size=self.batch_size), dtype=float)
		vectors[~np.isfinite(vectors)] = 0.0
		norms = np.linalg.norm(vectors, axis=1, keepdims=True)
		# Text made only of unknown tokens pools to zero; a fixed unit vector keeps it comparable.
		zero = norms[:, 0] == 0
		vectors[zero, 0], norms[zero] = 1.0, 1.0
		return (vectors / norms).tolist()


class ContentWordsEmbedder:
	"""Another embedder applied to a text's content words only (stopwords dropped), for knowledge search.

	A mean of static token vectors is pulled towards the function words every text shares; on
	the knowledge benchmark's dev questions, dropping them lifted paraphrased-question recall.
	Its own ``name``, so a store embedded one way is never searched the other way.
	"""

	def __init__(self, inner: Embedder):
		self.inner = inner
		self.name = f"{inner.name}-content-words"
		self.dimension = inner.dimension
		self.batch_size = inner.batch_size

	def embed(self, texts: list[str]) -> list[list[float]]:
		return self.inner.embed([" ".join(tokens(text)) or text for text in texts])


_builtin: BuiltinEmbedder | None = None
_builtin_lock = threading.Lock()


def builtin_embedder() -> BuiltinEmbedder:
	"""The built-in embedder, loaded once per process from the files inside the ``wordllama`` package."""
	global _builtin
	with _builtin_lock:
		if _builtin is None:
			_builtin = BuiltinEmbedder(_load_wordllama())
		return _builtin


def _load_wordllama():
	# wordllama's inference module calls logging.basicConfig() on import, which would install
	# a handler on the host process's root logger (a Frappe worker's, say); undo that.
	root = logging.getLogger()
	handlers, level = list(root.handlers), root.level
	try:
		import wordllama
		from wordllama import WordLlama
	except ImportError as exc:
		raise EmbeddingError(
			f"the built-in embedder needs the wordllama package ({exc}); install it with pip install wordllama"
		) from None
	finally:
		for handler in root.handlers[:]:
			if handler not in handlers:
				root.removeHandler(handler)
		root.setLevel(level)
	# WordLlama.load() looks for the bundled tokenizer under a folder name the wheel does not use and
	# would then download it; pointing its cache at the package's own folder finds both files.
	folder = Path(wordllama.__file__).resolve().parent
	try:
		return WordLlama.load(BUILTIN_CONFIG, cache_dir=folder, dim=BUILTIN_DIMENSION, disable_download=True)
	except (FileNotFoundError, OSError, ValueError) as exc:
		raise EmbeddingError(
			f"the built-in embedder's model files are missing from {folder} ({exc}); reinstall wordllama"
		) from None


class HashingEmbedder:
	"""Deterministic bag of words and word pairs hashed into ``dimension`` buckets, unit length."""

	def __init__(self, dimension: int = 256, *, batch_size: int = DEFAULT_BATCH_SIZE):
		self.dimension = dimension
		self.batch_size = batch_size
		self.name = f"hashing-{dimension}"

	def embed(self, texts: list[str]) -> list[list[float]]:
		return [self._vector(text) for text in texts]

	def _vector(self, text: str) -> list[float]:
		vector = [0.0] * self.dimension
		words = [stem(word) for word in tokens(text)]
		features = words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
		for feature in features:
			digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
			bucket = int.from_bytes(digest[:4], "little") % self.dimension
			vector[bucket] += 1.0 if digest[4] & 1 else -1.0
		norm = math.sqrt(sum(value * value for value in vector))
		if norm == 0:
			# An all-zero vector has no cosine distance; a fixed unit vector keeps it comparable.
			vector[0] = 1.0
			return vector
		return [value / norm for value in vector]


_WORD = re.compile(r"[^\W_]+", re.UNICODE)
STOPWORDS = frozenset(
	"a an and are as at be by can do does for from has have how i if in into is it its me my no not of on "
	"or our so that the their them then there these this to was we what when where which who why will with "
	"you your".split()
)


def tokens(text: str) -> list[str]:
	"""Lowercase words without stopwords; shared by the lexical index and the hashing embedder."""
	return [word for word in _WORD.findall(text.lower()) if word not in STOPWORDS]


def stem(word: str) -> str:
	"""Snowball English stem, so 'invoices' matches 'invoice' and 'approved' matches 'approval'."""
	return _stem(word)


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
	return _STEMMER.stemWord(word)


_STEMMER = Stemmer.Stemmer("english")


def _describe(exc: Exception) -> str:
	status = getattr(exc, "status_code", None)
	message = " ".join(str(exc).split()) or type(exc).__name__
	return f"HTTP {status}: {message}" if status else message
