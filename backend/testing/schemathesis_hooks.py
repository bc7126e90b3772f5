# schemathesis hooks for backend/src/fuzz.test.ts (loaded through SCHEMATHESIS_HOOKS).
#
# Every check stays on. The one hook below forgives a failure only when the server refused a request
# for a rule the OpenAPI document states in words because JSON Schema cannot express it: a time that
# must lie in the future or after the call began, an analytics range (start before end, at most so many
# days), names that must be unique, a rule that depends on what is stored (the bot's declared variables,
# for a call or an inbound number; the trunks' numbers; a trunk's stored username), what DNS says about a
# webhook URL's host, or the 64 KiB body limit (a byte count, not a schema keyword).
# Each rule is named by the error the server gives for it, for the operations that document it;
# anything else still fails the run.
from __future__ import annotations

import json
import os
import re
from typing import Any

import schemathesis

BODY_LIMIT_BYTES = 64 * 1024

# operationId -> predicates over one `details` entry of a 422 `validation_failed`.
_DETAIL_RULES: dict[str, list[Any]] = {}


def _rule(operations: tuple[str, ...], field: str, message: str) -> None:
    f, m = re.compile(field), re.compile(message)
    for op in operations:
        _DETAIL_RULES.setdefault(op, []).append(lambda d, f=f, m=m: bool(f.fullmatch(str(d.get("field", ""))) and m.search(str(d.get("message", "")))))


# expires_at: "must lie in the future" (a time the schema cannot compare with the clock).
_rule(("createApiKey", "updateApiKey"), r"expires_at", r"^must be in the future$")
# Bots: variable names unique; placeholders name declared variables; tool parameters at most 32 deep.
_rule(("createBot", "updateBot"), r"variables\.\d+\.name", r" is declared twice$")
_rule(("createBot", "updateBot"), r"prompt|greeting|policy\.intents\.\d+\.reply|policy\.fallback\.reply", r"^\{\{.*\}\} is not a declared variable$")
_rule(("createBot", "updateBot"), r"tools\.\d+\.parameters", r"^nests deeper than \d+ levels$")
# Policy templates: {{result.…}} only in an acting intent's reply; arguments and on_error_reply are templates too.
_rule(("createBot", "updateBot"), r"prompt|greeting|policy\.intents\.\d+\.(reply|on_error_reply|action\.arguments\..+)|policy\.fallback\.reply|answering_machine\.message", r"^\{\{.*\}\} (is not a declared variable|is only for the reply of an intent with an action)$")
# Answering machines: leaving a message needs the message.
_rule(("createBot", "updateBot"), r"answering_machine\.message", r"(required for on_machine .*|^\{\{.*\}\} is not a declared variable)$")
# Turn detection: a complete utterance never waits longer than an incomplete one.
_rule(("createBot", "updateBot"), r"turn_detection\.min_silence_ms", r"^must be at most end_of_turn_silence_ms \(\d+\)$")
# Tools (docs/design.md §9): names unique, a type's own fields only, what each type needs, the URL guard.
_rule(("createBot", "updateBot"), r"tools\.\d+\.name", r" names another tool already$")
_rule(("createBot", "updateBot"), r"tools\.\d+\.parameters", r"^(must be a JSON Schema of an object|is not a JSON Schema)")
_rule(("createBot", "updateBot"), r"tools\.\d+\.\w+", r"^is not a field of ")
_rule(("createBot", "updateBot"), r"tools\.\d+\.url", r"^(is required for an http tool|is not a valid URL|must be an http:// or https:// URL|must not contain a user name or password.*|host does not resolve|host could not be resolved in time|resolves to .*|\S+ is a loopback, private, link-local or otherwise non-public address)$")
_rule(("createBot", "updateBot"), r"tools\.\d+\.destinations(\.\d+)?(\.sip_uri)?", r"^(is required for a transfer_call tool|needs exactly one of number and sip_uri|a warm transfer dials a number .*)$")
_rule(("createBot", "updateBot"), r"tools\.\d+\.whisper", r"warm mode only")
# The policy against the bot's tools: an intent matched by examples or keys, acting with an http, transfer_call or send_dtmf tool it has.
_rule(("createBot", "updateBot"), r"policy\.intents\.\d+\.examples", r"^needs at least one example, or dtmf$")
_rule(("createBot", "updateBot"), r"policy\.intents\.\d+\.action\.tool", r"(is not one of the bot's tools|is not an http, transfer_call or send_dtmf tool.*)")
_rule(("createBot", "updateBot"), r"policy\.intents\.\d+\.on_error_reply", r"it needs an action$")
# Post-call analysis (docs/design.md §10): field names unique, enum values for enum fields only (required there,
# each once); an intent's `sets` name analysis fields with a value of the field's type.
_rule(("createBot", "updateBot"), r"analysis\.fields\.\d+\.name", r" names another field already$")
_rule(("createBot", "updateBot"), r"analysis\.fields\.\d+\.values(\.\d+)?", r"^(is required for an enum field.*|is for enum fields only .*|.* is listed twice)$")
_rule(("createBot", "updateBot"), r"policy\.intents\.\d+\.sets\..+", r"^(.* is not one of the bot's analysis fields|must be an? \w+: the field's type|must be one of the enum field's values .*)$")
# PATCH of a trunk: a new password needs a username, this PATCH's or the stored one.
_rule(("updateOutboundTrunk",), r"auth_password", r"^needs auth_username$")
# Password change: the current password is checked against the stored one, and the new one must differ from it.
_rule(("changePassword",), r"current_password|new_password", r"^(is wrong|must differ from the current password)$")
# Call events: times may not lie before the call's creation or its last status time (server state).
_rule(("callEvent",), r"at|transcript\.\d+\.at", r"before the call")
# Webhook URLs: what the URL parser and DNS say (the host must resolve, to public addresses only).
_rule(("createWebhook", "updateWebhook"), r"url", r"^(is not a valid URL|host does not resolve|host could not be resolved in time|resolves to .*|\S+ is a loopback, private, link-local or otherwise non-public address)$")

# Campaigns: a time zone Intl knows; windows that end after they start; a CSV upload's header and lines
# (a CSV body is a string to the schema: its columns and quoting are stated in words).
_rule(("createCampaign",), r"timezone", r"^is not an IANA time zone this server knows$")
_rule(("createCampaign",), r"windows\.\d+\.end", r"^must be after start$")
_rule(("addCampaignContacts",), r"csv(\.header(\.\d+)?|\.row\.\d+)?", r".")
# Call analytics: `from` before `to` (the default `from` is counted back from `to`), and a range at most a number of
# days for the interval (two times the schema cannot compare).
_rule(("getCallAnalytics",), r"from", r"^must be before to$")
_rule(("getCallAnalytics",), r"to", r"^must be at most \d+ days after from with interval (hour|day)$")
# Phone numbers (docs/design.md §13): any string up to 64 characters is a number input; libphonenumber says
# whether it can exist (the reasons of schemas/src/phone.ts), and a trunk's numbers are unique once normalised.
_PHONE_REASON = r"^(too short|too long|invalid length|invalid country calling code|not a number|must not have an extension|unknown region|is the same number as numbers\.\d+ \(\+\d+\))$"
_rule(("createCampaign",), r"from_number", _PHONE_REASON)
_rule(("createOutboundTrunk", "updateOutboundTrunk"), r"numbers\.\d+", _PHONE_REASON)
_rule(("createInboundNumber", "updateInboundNumber"), r"number", _PHONE_REASON)
# A bot's transfer destinations: international formats only (a bot has no region), the same reasons.
_rule(("createBot", "updateBot"), r"tools\.\d+\.destinations\.\d+\.number", _PHONE_REASON)
_rule(("addDoNotCall", "listDoNotCall", "deleteDoNotCall"), r"numbers\.\d+|number", _PHONE_REASON)

# Supervisor controls: `text` for say and instruct, `to` for transfer, neither for end (the description says which).
_rule(("controlCall",), r"text|to", r"^is (required for|not taken by) (say|instruct|transfer|end)$")

# Flows and handoffs (docs/design.md §18): the graph (targets, reachability, a way to end), node tools and intents
# against the bot's, and handoff targets against the stored bots.
_rule(("createBot", "updateBot"), r"flow(\..+)?|handoff(\..+)?", r".")
_rule(("createBot", "updateBot"), r"tools\.\d+\.name", r"handoff")
# Knowledge bases a bot names must exist; MCP server URLs: what the URL parser and DNS say (as tool URLs).
_rule(("createBot", "updateBot"), r"knowledge_base_ids\.\d+", r" is not a knowledge base$")
_rule(("createBot", "updateBot"), r"mcp_servers\.\d+\.url", r"^(is not a valid URL|must be an http:// or https:// URL|must not contain a user name or password.*|host does not resolve|host could not be resolved in time|resolves to .*|\S+ is a loopback, private, link-local or otherwise non-public address)$")
_rule(("createBot", "updateBot"), r"mcp_servers\.\d+\.(name|allowed_tools\.\d+)", r"( names another MCP server already| is listed twice)$")
# Knowledge documents: what the bytes are (UTF-8 text, a readable PDF with text, a form with its file) and the file's
# name (X-Filename or the form's), checked against the content, which a schema of a body cannot say.
_rule(("uploadKnowledgeDocument",), r"file|X-Filename|filename", r"^(is not UTF-8 text|is not a PDF .*|is not a readable PDF|has no text|is not a readable multipart form|is missing: .*|needs a file name .*)$")
# Bot tests (docs/design.md §17): a case against the bot (its tools, mocks, variables, an LLM for a judge, callers run
# so far); a run against the stored cases and versions; a test call's run.
_rule(("createBotTest", "updateBotTest"), r"caller(\..+)?|tool_mocks(\..+)?|expect(\..+)?|transport|variables(\..+)?", r".")
_rule(("createBotTestRun",), r"cases|version", r"^the bot has no (test cases to run|test case .*|version .*)$")
_rule(("createCall",), r"test\.run_id", r"^no such test run$")

# operationId -> error codes that depend on stored data, not on the request's shape.
_STATE_CODES = {
    # invalid_phone_number: a to_number or from_number libphonenumber says cannot exist (schemas/src/phone.ts).
    "dialout": {"variables_mismatch", "unknown_from_number", "invalid_phone_number"},
    "createCall": {"variables_mismatch"},
    # Bot test cases: a transport this platform cannot run yet, and the bot's declared variables.
    "createBotTest": {"transport_unavailable", "variables_mismatch"},
    "updateBotTest": {"transport_unavailable", "variables_mismatch"},
    "createBotTestRun": {"variables_mismatch"},
    "createWidgetCall": {"variables_mismatch"},
    # The trunks' numbers, at creation and again when a campaign starts or resumes.
    "createCampaign": {"unknown_from_number"},
    "startCampaign": {"unknown_from_number"},
    "resumeCampaign": {"unknown_from_number"},
    # Inbound numbers: the variables against the stored bot's declared ones.
    "createInboundNumber": {"variables_mismatch"},
    "updateInboundNumber": {"variables_mismatch"},
}


@schemathesis.serializer("text/csv")
def _csv(ctx: Any, value: Any) -> bytes | None:
    """CSV uploads (addCampaignContacts): the schema's string as is; anything else is sent without a body."""
    return value.encode("utf-8") if isinstance(value, str) else None


def _operation_id(case: Any) -> str:
    return str(case.operation.definition.raw.get("operationId", ""))


def _error(response: Any) -> dict[str, Any]:
    try:
        body = json.loads(response.content or b"null")
    except ValueError:
        return {}
    err = body.get("error") if isinstance(body, dict) else None
    return err if isinstance(err, dict) else {}


def _body_size(response: Any) -> int:
    body = getattr(response.request, "body", None) or b""
    return len(body.encode() if isinstance(body, str) else body)


def _forgiven(case: Any, response: Any, reason: str) -> bool:
    """Records a forgiven failure (VP_FUZZ_FORGIVEN names an NDJSON file) so a run's exceptions can be read."""
    path = os.environ.get("VP_FUZZ_FORGIVEN")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            err = _error(response)
            if isinstance(err.get("details"), list):
                err = {**err, "details": err["details"][:5]}
            line = {"operation": _operation_id(case), "status": response.status_code, "reason": reason, "error": err}
            out.write(json.dumps(line) + "\n")
    return False


@schemathesis.hook
def filter_failure(context: Any, failure: Any, case: Any, response: Any) -> bool:
    """True keeps the failure."""
    code = getattr(failure, "code", "")
    err = _error(response)
    # 413 for a body over the documented limit is a rejection, valid-by-schema or not.
    if code in ("ST201", "ST202") and response.status_code == 413 and err.get("code") == "payload_too_large":
        return True if _body_size(response) <= BODY_LIMIT_BYTES else _forgiven(case, response, "body over 64 KiB")
    # A WebSocket endpoint: a fuzzer's plain GET is refused 400 as the document says (it cannot upgrade).
    if code == "ST202" and response.status_code == 400 and _operation_id(case) == "listenCall" and err.get("code") == "bad_request":
        return _forgiven(case, response, "a WebSocket endpoint asked without the upgrade")
    if code != "ST202" or response.status_code != 422:
        return True
    op = _operation_id(case)
    if err.get("code") in _STATE_CODES.get(op, set()):
        return _forgiven(case, response, "depends on stored data")
    details = err.get("details")
    rules = _DETAIL_RULES.get(op, [])
    if err.get("code") == "validation_failed" and isinstance(details, list) and details and rules:
        if all(isinstance(d, dict) and any(rule(d) for rule in rules) for d in details):
            return _forgiven(case, response, "a rule the document states in words")
    return True
