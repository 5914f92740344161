"""Ask an OpenAI-compatible endpoint for a validated ``LLMAnswer``.

Response strategies are tried in order, each a small registered function: OpenAI's ``json_schema``;
``json_object`` with the schema (llama.cpp's server refuses json_schema with HTTP 500); plain text
with the JSON extracted. Every reply is validated with pydantic and re-asked with the validation
error (bounded). Any failure becomes an ``LLMError`` whose reason the report shows."""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from pydantic import ValidationError

from oomtriage.errors import LLMError

from . import exchanges
from .config import LLMConfig
from .schema import LLMAnswer

ResponseFormat = Callable[[dict[str, Any]], "dict[str, Any] | None"]
STRATEGIES: dict[str, ResponseFormat] = {}


def strategy(name: str):
    def register(function: ResponseFormat) -> ResponseFormat:
        STRATEGIES[name] = function
        return function

    return register


@strategy("json_schema")
def _json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "LLMAnswer", "schema": schema, "strict": False}}


@strategy("json_object")
def _json_object(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_object", "schema": schema}


@strategy("text")
def _plain_text(schema: dict[str, Any]) -> None:
    return None


@dataclass
class Answer:
    answer: LLMAnswer
    exchange: exchanges.Exchange
    cached: bool = False


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def extract_json(text: str) -> str:
    """The JSON object in a reply that may wrap it in prose or a code fence."""
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    start = text.find("{")
    if start < 0:
        raise ValueError("the reply holds no JSON object")
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        character = text[index]
        if in_string:
            if escaped:
                escaped = False  # this character is escaped, whatever it is
            elif character == "\\":
                escaped = True
            elif character == '"':
                in_string = False
            continue
        if character == '"':
            in_string = True
        elif character == "{":
            depth += 1
        elif character == "}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    raise ValueError("the reply's JSON is cut off (truncated reply)")


def parse_answer(raw: str) -> LLMAnswer:
    try:
        return LLMAnswer.model_validate_json(extract_json(raw))
    except ValueError as error:
        if isinstance(error, ValidationError):
            raise
        raise ValueError(f"not JSON: {error}") from None


def make_client(config: LLMConfig) -> Any:
    import openai

    api_key = config.api_key.get_secret_value() if config.api_key else None
    if config.base_url and not api_key:
        api_key = "sk-no-key-required"  # local servers ignore it; the SDK insists on one
    retries = config.max_retries if config.max_retries is not None else (0 if config.is_local else 2)
    return openai.OpenAI(base_url=config.base_url, api_key=api_key, timeout=config.timeout, max_retries=retries)


def _complete(client: Any, config: LLMConfig, messages: list[dict[str, str]], name: str) -> tuple[str, dict, str | None]:
    request: dict[str, Any] = {"model": config.model_name, "messages": messages, "temperature": 0,
                               "max_tokens": config.max_answer_tokens}
    response_format = STRATEGIES[name](LLMAnswer.model_json_schema())
    if response_format is not None:
        request["response_format"] = response_format
    completion = client.chat.completions.create(**request)
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise LLMError("the endpoint answered without a choice (no 'choices' in the reply)", reason="invalid_reply")
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None) if message is not None else None
    if content is not None and not isinstance(content, str):
        raise LLMError("the endpoint's reply has no text content", reason="invalid_reply")
    if content and len(content) > MAX_REPLY_CHARS:
        raise LLMError(f"the reply is {len(content):,} characters, over the {MAX_REPLY_CHARS:,} limit", reason="too_large")
    usage = completion.usage.model_dump() if getattr(completion, "usage", None) else {}
    return content or "", usage if isinstance(usage, dict) else {}, getattr(choice, "finish_reason", None)


MAX_REPLY_CHARS = 200_000  # a real answer is a few KB; larger is a broken or hostile server


def _before(deadline: float, call: Callable[[], Any], config: LLMConfig) -> Any:
    """Run ``call`` but give up at ``deadline``: the SDK's timeout is per read, so a server that
    drips one byte a second would never time out. The abandoned call ends with the process."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise LLMError(f"the endpoint did not answer within {config.timeout:g} s in all", reason="timeout")
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = error

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(remaining)
    if worker.is_alive():
        raise LLMError(f"the endpoint did not answer within {config.timeout:g} s in all", reason="timeout")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _call_with_fallbacks(client: Any, config: LLMConfig, messages: list[dict[str, str]],
                         deadline: float | None = None) -> tuple[str, dict, str]:
    import openai

    deadline = deadline if deadline is not None else time.monotonic() + config.timeout
    refusals = []
    for name in STRATEGIES:
        try:
            raw, usage, finish = _before(deadline, lambda: _complete(client, config, messages, name), config)
        except openai.APITimeoutError:
            raise LLMError(f"the endpoint did not answer within {config.timeout:g} s", reason="timeout") from None
        except openai.APIConnectionError as error:
            raise LLMError(f"cannot reach {config.base_url or 'the OpenAI API'} ({error.__class__.__name__})", reason="unreachable") from None
        except openai.AuthenticationError:
            raise LLMError("the endpoint rejected the API key (HTTP 401)", reason="auth") from None
        except openai.NotFoundError:
            raise LLMError(f"the endpoint does not know model {config.model_name!r} (HTTP 404)", reason="model") from None
        except openai.APIStatusError as error:
            refusals.append(f"{name}: HTTP {error.status_code}")
            continue  # the server refused this response_format (or failed): try the next strategy
        except LLMError:
            raise
        except (ValueError, TypeError, AttributeError, KeyError, IndexError, openai.OpenAIError) as error:
            # A 200 with an HTML or empty body, JSON of the wrong shape: not an answer.
            raise LLMError(f"the endpoint's reply is not a chat completion ({type(error).__name__}: {_first_line(error, 120)})",
                           reason="invalid_reply") from None
        if finish == "length":
            raise LLMError(f"the reply was cut off at {config.max_answer_tokens} tokens (truncated reply)", reason="truncated")
        return raw, usage, name
    raise LLMError(f"the endpoint failed every request ({'; '.join(refusals)})", reason="http_error")


def ask(config: LLMConfig, messages: list[dict[str, str]]) -> Answer:
    """A validated answer, from the exchange cache or the endpoint; ``LLMError`` otherwise."""
    identifier = exchanges.exchange_id(config.model_name, config.base_url, messages)
    if config.cache:
        cached = exchanges.load(identifier)
        if cached and cached.outcome == "ok" and cached.raw_reply:
            try:
                return Answer(parse_answer(cached.raw_reply), cached, cached=True)
            except ValueError:
                pass
    client = make_client(config)
    conversation = list(messages)
    exchange = exchanges.Exchange(id=identifier, model=config.model_name, base_url=config.base_url, messages=messages)
    started = time.perf_counter()
    deadline = time.monotonic() + config.timeout  # the whole exchange, re-asks included
    try:
        for attempt in range(config.reasks + 1):
            raw, usage, name = _call_with_fallbacks(client, config, conversation, deadline)
            exchange.raw_reply, exchange.usage, exchange.strategy = raw, usage, name
            try:
                answer = parse_answer(raw)
            except ValueError as error:
                if attempt == config.reasks:
                    raise LLMError(f"the model's reply did not validate: {_first_line(error)}", reason="invalid_reply") from None
                conversation += [{"role": "assistant", "content": raw[:4000]},
                                 {"role": "user", "content": f"That reply is invalid: {_first_line(error, 600)}\n"
                                                             "Answer again with only the corrected JSON object."}]
                continue
            exchange.latency_s = round(time.perf_counter() - started, 3)
            exchanges.save(exchange)
            return Answer(answer, exchange)
    except LLMError as error:
        exchange.outcome, exchange.latency_s = f"failed: {error.reason}", round(time.perf_counter() - started, 3)
        exchanges.save(exchange)
        raise
    raise AssertionError("unreachable")


def _first_line(error: Exception, limit: int = 200) -> str:
    text = str(error)
    if isinstance(error, ValidationError):
        text = "; ".join(f"{'.'.join(map(str, item['loc']))}: {item['msg']}" for item in error.errors()[:5])
    return " ".join(text.split())[:limit]
