#!/usr/bin/env python3
"""Writes the hostile-input corpus of Tests/Corpus/ (see README.md).

Each NAME.ndjson holds one hostile line per line; NAME.reasons holds, line for line,
text the rejection reason must contain. accepted.ndjson holds odd but valid events
that must be stored. The .apns files are mangled notification payloads for `import`.
The committed files are the corpus; this script is how they were made (run it from
anywhere, then review the diff).
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
AT = "2026-11-29T10:00:00Z"


def q(s):
    return json.dumps(s, ensure_ascii=False)


def delivery(id="bad", user="u_hostile", status="200", extra="", at=AT, notification="n-1"):
    return (f'{{"type":"delivery","id":{q(id)},"at":{q(at)},"user":{q(user)},'
            f'"notification_id":{q(notification)},"status":{status}{extra}}}')


def action(id="bad", task="1101", act='"open"', outcome='"ok"', extra="", at=AT):
    return (f'{{"type":"action","id":{q(id)},"at":{q(at)},"user":"u_hostile",'
            f'"task_id":{task},"action":{act},"outcome":{outcome}{extra}}}')


def notification(id="bad", aps='{"alert":"Take out the bins","category":"TASK_ACTIONABLE"}', payload_extra="", extra=""):
    return (f'{{"type":"notification","id":{q(id)},"at":{q(AT)},"user":"u_hostile",'
            f'"payload":{{"aps":{aps}{payload_extra}}}{extra}}}')


def fcm(data='{"task_id":"1101","thread_id":"task-1101","category":"TASK_ACTIONABLE"}', payload_extra="", extra="",
        id="bad", token="cHoStIlE:APA91bHostileToken"):
    """An Android notification: an FCM message whose data map is `data`."""
    token_member = f'"token":{q(token)},' if token is not None else ""
    return (f'{{"type":"notification","id":{q(id)},"at":{q(AT)},"user":"u_hostile","platform":"android",'
            f'"payload":{{{token_member}"data":{data}{payload_extra}}}{extra}}}')


def raw_user(bytes_):
    """A delivery whose user string holds `bytes_` as they are (not escaped)."""
    head = b'{"type":"delivery","id":"bad","at":"2026-11-29T10:00:00Z","user":"u'
    return head + bytes_ + b'","notification_id":"n-1","status":200}'


def write(name, cases):
    lines, reasons = [], []
    for line, reason in cases:
        if isinstance(line, str):
            line = line.encode()
        assert b"\n" not in line, (name, line)
        assert line.strip(b" \t\r") != b"", (name, line)  # blank lines are skipped, not rejected
        assert reason and "\n" not in reason
        lines.append(line)
        reasons.append(reason)
    with open(os.path.join(HERE, name + ".ndjson"), "wb") as f:
        f.write(b"".join(l + b"\n" for l in lines))
    with open(os.path.join(HERE, name + ".reasons"), "w", encoding="utf-8") as f:
        f.write("".join(r + "\n" for r in reasons))


J = "invalid JSON"
GOOD = delivery()

# Every class of invalid JSON, in the spirit of JSONTestSuite's n_ files, plus what
# logs really get mangled into.
write("json-syntax", [
    ("{", J), ("}", J), ("[", J), ("]", J), (":", J), (",", J), ('"', J), ("\\", J),
    ("{{}}", J), ("{]", J), ("[}", J),
    (GOOD[:-1], J),                                   # cut before its last brace
    (GOOD[: len(GOOD) // 2], J),                      # cut in the middle
    (GOOD[:-1] + ",}", J),                            # trailing comma in the object
    ('{"type":"delivery",}', J),
    (delivery(extra=',"tags":[1,2,]'), J),            # trailing comma in an array
    (delivery(extra=',"tags":[,1]'), J),
    (delivery(extra=',"tags":[1,,2]'), J),
    ('{,"type":"delivery"}', J),
    ('{"type":"delivery",,"id":"bad"}', J),
    ('{"type":"delivery" "id":"bad"}', J),            # missing comma
    ('{"type" "delivery"}', J),                       # missing colon
    ('{"type"::"delivery"}', J),
    ('{"type":}', J),                                 # missing value
    ('{"type"}', J),
    ('{:"delivery"}', J),
    ("{'type':'delivery','id':'bad'}", J),            # single quotes
    ('{type:"delivery"}', J),                         # unquoted key
    ('{"type":delivery}', J),                         # unquoted value
    ('{1:"delivery"}', J),                            # number as key
    ('{"a":{1:2}}', J),
    (GOOD + " // a comment", J),
    ("/* a comment */ " + GOOD, J),
    ('{"type":"delivery" /* c */}', J),
    ("# a comment", J),
    (delivery(status="NaN"), J), (delivery(status="Infinity"), J), (delivery(status="-Infinity"), J),
    (delivery(status="0x10"), J), (delivery(status="0200"), J), (delivery(status="-0200"), J),
    (delivery(status="+200"), J), (delivery(status=".5"), J), (delivery(status="200."), J),
    (delivery(status="2.e2"), J), (delivery(status="2e"), J), (delivery(status="2e+"), J),
    (delivery(status="-"), J), (delivery(status="--200"), J), (delivery(status="2_00"), J),
    (delivery(status="2 00"), J), (delivery(status="0.1.2"), J), (delivery(status="2e2e3"), J),
    (delivery(status="- 200"), J), (delivery(status="2E--2"), J), (delivery(status="\u0662\u0660\u0660"), J),
    (delivery(extra=',"b":tru'), J), (delivery(extra=',"b":True'), J), (delivery(extra=',"b":NULL'), J),
    (delivery(extra=',"b":nul'), J), (delivery(extra=',"b":falsey'), J), (delivery(extra=',"b":truefalse'), J),
    (delivery(extra=',"b":undefined'), J), (delivery(extra=',"b":None'), J),
    (delivery(extra=r',"s":"\x41"'), J), (delivery(extra=r',"s":"\'"'), J), (delivery(extra=r',"s":"\U0041"'), J),
    (delivery(extra=r',"s":"\u12"'), J), (delivery(extra=r',"s":"\u12G4"'), J), (delivery(extra=r',"s":"\a"'), J),
    (delivery(extra=r',"s":"\"}'), J),               # the escape eats the closing quote
    ('{"type":"delivery","s":"abc}', J),               # unterminated string
    ('{"type":"delivery","s":"abc', J),
    ('{"type":"delivery","s":"\\', J),
    ('{"type":"delivery","s":"\\u', J),
    ('{"type":"delivery","s":"\\u00', J),
    (GOOD + "}", J), (GOOD + "]", J), ('{"a":[1}', J), ('{"a":1]', J),
    (GOOD + GOOD, J),                                  # two events on one line
    (GOOD + " " + GOOD, J), (GOOD + "," + GOOD, J), (GOOD + " x", J), (GOOD + ",", J), ("{} {}", J),
    ("\f" + GOOD, J), ("\v" + GOOD, J), (GOOD + "\f", J),     # not JSON whitespace
    ("\u00a0" + GOOD, J), ("\u3000" + GOOD, J), ('{"type":\u00a0"delivery"}', J),
    ("[" * 10, J), ('{"a":' * 10, J),
    # Pretty-printed JSON is not NDJSON: each of its lines is rejected on its own.
    ('  "type": "delivery",', J), ('  "payload": {', J), ("  }", J),
    # Log lines, Python reprs and other near-misses.
    ("2026-11-29 10:00:00 INFO " + GOOD, J),
    ("data: " + GOOD, J),
    ("{'type': 'delivery', 'id': 'bad', 'status': 200, 'ok': True}", J),
    ('{"type"="delivery","id"="bad"}', J),
    ("type=delivery id=bad status=200", J),
    ("<event type=\"delivery\"/>", J),
    ("delivery,bad,2026-11-29T10:00:00Z,u_hostile,n-1,200", J),
    ("\\" + GOOD, J),                                 # an escaped line, pasted from a log
    (GOOD.replace('"', '\\"'), J),
])

# Duplicate keys (docs/DESIGN.md, "Choices in edge cases": rejected anywhere in an event).
D = "duplicate key"
write("duplicate-keys", [
    (GOOD[:-1] + ',"status":200}', D),
    (GOOD[:-1] + ',"status":404}', D),
    ('{"type":"delivery","type":"action"}', D),
    (GOOD[:-1] + r',"\u0073tatus":200}', D),         # equal once unescaped
    (GOOD[:-1] + r',"x":1,"\x":2}', J),              # \x is no escape at all
    (notification(payload_extra=',"task_id":1,"task_id":1'), D),
    (notification(aps='{"alert":"a","alert":"b"}'), D),
    (delivery(extra=',"m":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"a":18}}'), D),
    (delivery(extra=',"list":[{"k":1},{"k":1,"k":2}]'), D),
    # A reason quotes the key: it must stay one line, whatever the key holds.
    (GOOD[:-1] + r',"a\nb":1,"a\nb":2}', D),
    (GOOD[:-1] + r',"\u001b[2J":1,"\u001b[2J":2}', D),
    (GOOD[:-1] + r',"k\u0000":1,"k\u0000":2}', D),
    (GOOD[:-1] + r',"k\r":1,"k\r":2}', D),
])

# Invalid UTF-8 inside strings (at each offset of the parser's 8-byte stride) and
# outside them; text in other encodings.
U = "UTF-8"
utf8 = []
for pad in range(8):
    utf8.append((raw_user(b"x" * pad + b"\xff"), U))
for bad in [b"\x80", b"\xbf", b"\xc0\x80", b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xe0\x9f\xbf",
            b"\xf0\x80\x80\xaf", b"\xf0\x8f\xbf\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf",
            b"\xed\xa0\xbd\xed\xb8\x80",               # CESU-8: a surrogate pair encoded byte-wise
            b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xfc\x84\x80\x80\x80\x80",
            b"\xfe", b"\xff", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xc3\x28", b"\xe2\x28\xa1",
            b"\xf0\x28\x8c\xbc", b"\xe2\x82\x28",
            b"caf\xe9",                                # Latin-1
            b"\x93quoted\x94"]:                        # Windows-1252 smart quotes
    utf8.append((raw_user(bad), U))
utf8 += [
    (b'{"type":"delivery","id":"bad","at":"2026-11-29T10:00:00Z","user":"u\xf0\x9f\x98', U),  # cut mid-character at the end
    (b'{"type":"delivery","id":"bad","at":"2026-11-29T10:00:00Z","user":"u\xe2', U),
    (b'{"type":"delivery","id":"bad","at":"2026-11-29T10:00:00Z","user":"u\xc3', U),
    (b'{"type":"delivery","id":"bad\xff","at":"2026-11-29T10:00:00Z","user":"u","notification_id":"n-1","status":200}', U),
    (b'{"type":"delivery","\xff":1}', U),             # in a key
    (b'{"type":"delivery",\xff"id":"bad"}', J),        # outside a string
    (GOOD.encode() + b"\xff", J),
    (b"\xff" + GOOD.encode(), J),
    (b"\xc3\xa9", J),                                  # valid UTF-8, but no JSON
    (GOOD.encode("utf-16-le"), J),
    (b"\xff\xfe" + GOOD.encode("utf-16-le"), J),
    (b"\xfe\xff" + GOOD.encode("utf-16-be"), J),
    (GOOD.encode("utf-32-be"), J),
    (b"\x00\x00\xfe\xff" + GOOD.encode("utf-32-be"), J),
]
write("utf8", utf8)

# Lone and mismatched surrogate escapes.
S = "surrogate"
write("surrogates", [
    (raw_user(rb"\uD800"), S),
    (raw_user(rb"\uD800x"), S),
    (raw_user(rb"\uDBFF"), S),
    (raw_user(rb"\uDC00"), S),
    (raw_user(rb"\uDFFF"), S),
    (raw_user(rb"\ud800"), S),
    (raw_user(rb"\uD800\u0041"), S),
    (raw_user(rb"\uD800\uD800"), S),
    (raw_user(rb"\uDC00\uD800"), S),
    (raw_user(rb"\uD800\n"), S),
    (raw_user(rb"\uD800\\"), S),
    (raw_user(rb"\uD800\uDBFF\uDC00"), S),
    (raw_user(rb"\uD83D\uDE00\uDE00"), S),
    (b'{"type":"delivery","id":"bad\\uDE00","at":"2026-11-29T10:00:00Z","user":"u","notification_id":"n-1","status":200}', S),
    (b'{"type":"delivery","\\uD800":1}', S),
    (notification(aps='{"alert":{"title":"\\uDEAD"}}').encode(), S),
    (b'{"type":"delivery","s":"\\uD800\\u', J),
    (b'{"type":"delivery","s":"\\uD800\\uDC', J),
    (b'{"type":"delivery","s":"\\uD800"}', S),
])

# Byte-order marks.
BOM = b"\xef\xbb\xbf"
B = "byte-order mark"
write("bom", [
    (BOM + GOOD.encode(), B),
    (BOM, B),
    (BOM + BOM + GOOD.encode(), B),
    (BOM + b"  " + GOOD.encode(), B),
    (BOM + b"[]", B),
    (b" " + BOM + GOOD.encode(), J),
    (b"\xef\xbb" + GOOD.encode(), J),
    (b"\xfe\xff" + GOOD.encode(), J),
    (b"\xff\xfe" + GOOD.encode(), J),
    (GOOD[:-1].encode() + b"," + BOM + b'"x":1}', J),
    (GOOD.encode() + BOM, J),
])

# Numbers a double cannot hold, and numbers where an integer is required.
T = "too large"
write("numbers", [
    (delivery(status="1e999"), T),
    (delivery(status="-1e999"), T),
    (delivery(status="1E400"), T),
    (delivery(status="1e309"), T),
    (delivery(status="1e99999999999999999999"), T),
    (delivery(status="2" + "0" * 400), T),
    (delivery(status="200.0e999"), T),
    (action(task="1e999"), T),
    (action(task="1101", extra=',"http_status":1e999'), T),
    (delivery(extra=',"x":1e999'), T),
    (delivery(extra=',"x":[1,2,-1e999]'), T),
    (notification(payload_extra=',"task_id":1e999'), T),
    ("1e999", T),
    ('{"n":1e999}', T),
    (delivery(status="2e2"), "not 2e2"),
    (delivery(status="200.0"), "not 200.0"),
    (delivery(status="-200"), "not -200"),
    (delivery(status="0"), "not 0"),
    (delivery(status="9223372036854775808"), "not 9223372036854775808"),
    (delivery(status="1e-999"), "not 1e-999"),
    (delivery(status="true"), "not true"),
    (delivery(status='"200"'), 'not "200"'),
    (delivery(status="null"), "not null"),
    (delivery(status="[200]"), "not [200]"),
    (action(task="9223372036854775808"), '"task_id" must be an integer'),
    (action(task="-9223372036854775809"), '"task_id" must be an integer'),
    (action(task="99999999999999999999999999"), '"task_id" must be an integer'),
    (action(task="1101.0"), '"task_id" must be an integer'),
    (action(task="1.101e3"), '"task_id" must be an integer'),
    (action(task="-0.0"), '"task_id" must be an integer'),
    (action(task="1101", extra=',"http_status":409.5'), '"http_status" must be an integer from 100 to 599'),
    (notification(payload_extra=',"task_id":2002.5'), '"payload.task_id" must be an integer'),
    (notification(payload_extra=',"task_id":9223372036854775808'), '"payload.task_id" must be an integer'),
])

# Nesting past the parser's limit (64 levels). 100,000 levels and more are made by
# the test itself, so that the corpus stays small.
N = "nesting deeper than 64 levels"
write("nesting", [
    ("[" * 65 + "]" * 65, N),
    ('{"a":' * 65 + "1" + "}" * 65, N),
    ("[" * 1000, N),
    ('{"a":[' * 40, N),
    (delivery(extra=',"x":' + "[" * 64 + "]" * 64), N),
    (notification(payload_extra=',"deep":' + '{"a":' * 63 + "1" + "}" * 63), N),
    (action(extra=',"changes":' + '{"a":' * 64 + "1" + "}" * 64), N),
    (notification(aps='{"alert":' + "[" * 70 + "]" * 70 + "}"), N),
])

# NUL bytes, anywhere.
Z = "invalid JSON"
write("nul", [
    (b"\x00", Z),
    (b"\x00" * 16, Z),
    (b"\x00" + GOOD.encode(), Z),
    (GOOD.encode() + b"\x00", Z),
    (GOOD.encode() + b"\x00" * 100, Z),                # a log file pre-allocated with zeros
    (b'{"type":"delivery",\x00"id":"bad"}', Z),
    (b'{"type":"deli\x00very","id":"bad"}', "control character 0x0 in string"),
    (b'{"ty\x00pe":"delivery"}', "control character 0x0 in string"),
    (raw_user(b"\x00"), "control character 0x0 in string"),
    (raw_user(b"1234567\x00"), "control character 0x0 in string"),
    (b'{"type":"delivery","id":"bad","status":2\x0000}', Z),
    (b"\x00\r", Z),
])

# Control characters, and line breaks other than LF and CRLF.
C = "control character"
write("control", [
    (raw_user(b"\t"), C + " 0x9"),
    (raw_user(b"\r"), C + " 0xD"),
    (raw_user(b"\x1b[2J"), C + " 0x1B"),
    (raw_user(b"\x01"), C + " 0x1"),
    (raw_user(b"\x1f"), C + " 0x1F"),
    (raw_user(b"\x0c"), C + " 0xC"),
    (raw_user(b"abcdefg\x08"), C + " 0x8"),
    (b"\x0b", J),
    (b"\x1a", J),                                      # Ctrl-Z, DOS end of file
    (GOOD.encode() + b"\x1a", J),
    (b"\x1b[31m" + GOOD.encode() + b"\x1b[0m", J),    # coloured log output
    (GOOD.encode() + b"\r" + GOOD.encode(), J),        # classic Mac line ends: two events, one line
    (GOOD.encode() + b"\r" + GOOD.encode() + b"\r", J),
    ("\u2028" + GOOD, J),                              # Unicode line separator
    (GOOD + "\u0085", J),                              # NEL
])

# The rules of docs/EVENTS.md, each broken once in an otherwise valid event.
E = 'expected notification, action or delivery'
rules = [
    ("[]", "event is a JSON array, not an object"),
    ("[" + GOOD + "]", "event is a JSON array, not an object"),
    ("[" + GOOD + "," + GOOD.replace('"bad"', '"bad2"') + "]", "not an object"),
    (q(GOOD), "event is a JSON string, not an object"),  # encoded twice
    ('"delivery"', "not an object"),
    ("42", "event is a JSON number, not an object"),
    ("-0", "not an object"),
    ("true", "event is a JSON boolean, not an object"),
    ("false", "not an object"),
    ("null", "event is a JSON null, not an object"),
    ("{}", 'missing "type"'),
    (GOOD.replace('"type":"delivery",', ""), 'missing "type"'),
    (GOOD.replace('"delivery"', '"Delivery"'), '"type" is "Delivery"; ' + E),
    (GOOD.replace('"delivery"', '"ping"'), '"type" is "ping"; ' + E),
    (GOOD.replace('"delivery"', '""'), '"type" is ""; ' + E),
    (GOOD.replace('"delivery"', '" delivery"'), '"type" is " delivery"'),
    (GOOD.replace('"delivery"', "3"), '"type" must be a string, not 3'),
    (GOOD.replace('"delivery"', "null"), '"type" must be a string, not null'),
    (GOOD.replace('"delivery"', '["delivery"]'), '"type" must be a string'),
    (GOOD.replace('"id":"bad",', ""), 'missing "id"'),
    (delivery(id=""), '"id" must be 1–128 bytes, not 0'),
    (delivery(id="i" * 129), '"id" must be 1–128 bytes, not 129'),
    (delivery(id="é" * 65), '"id" must be 1–128 bytes, not 130'),
    (delivery(id="x").replace('"x"', '"' + "\\u0069" * 129 + '"'), '"id" must be 1–128 bytes, not 129'),
    (GOOD.replace('"bad"', "7"), '"id" must be a string, not 7'),
    (GOOD.replace('"bad"', "null"), '"id" must be a string, not null'),
    (GOOD.replace(f'"at":"{AT}",', ""), 'missing "at"'),
    (delivery(at=""), '"at" is ""'),
    (delivery(at="yesterday"), '"at" is "yesterday"'),
    (delivery(at="now"), '"at" is "now"'),
    (delivery(at="-2h"), '"at" is "-2h"'),
    (delivery(at="2026-11-29"), '"at" is "2026-11-29"'),
    (delivery(at="2026-11-29T10:00:00"), '"at" is "2026-11-29T10:00:00"'),
    (delivery(at="2026-11-29T10:00Z"), '"at" is "2026-11-29T10:00Z"'),
    (delivery(at="2026-02-30T10:00:00Z"), '"at" is "2026-02-30T10:00:00Z"'),
    (delivery(at="2025-02-29T10:00:00Z"), '"at" is "2025-02-29T10:00:00Z"'),
    (delivery(at="2026-13-01T10:00:00Z"), '"at" is "2026-13-01T10:00:00Z"'),
    (delivery(at="2026-00-10T10:00:00Z"), '"at" is "2026-00-10T10:00:00Z"'),
    (delivery(at="2026-11-00T10:00:00Z"), '"at" is "2026-11-00T10:00:00Z"'),
    (delivery(at="2026-11-29T24:00:00Z"), '"at" is "2026-11-29T24:00:00Z"'),
    (delivery(at="2026-11-29T10:60:00Z"), '"at" is "2026-11-29T10:60:00Z"'),
    (delivery(at="2026-11-29T10:00:61Z"), '"at" is "2026-11-29T10:00:61Z"'),
    (delivery(at="2026-11-29T10:00:00.Z"), '"at" is "2026-11-29T10:00:00.Z"'),
    (delivery(at="2026-11-29T10:00:00+24:00"), '"at" is "2026-11-29T10:00:00+24:00"'),
    (delivery(at="2026-11-29T10:00:00+0200"), '"at" is "2026-11-29T10:00:00+0200"'),
    (delivery(at="2026-11-29T10:00:00ZZ"), '"at" is "2026-11-29T10:00:00ZZ"'),
    (delivery(at="2026-11-29T10:00:00 UTC"), '"at" is "2026-11-29T10:00:00 UTC"'),
    (delivery(at="1764410400"), '"at" is "1764410400"'),
    (delivery(at="+2026-11-29T10:00:00Z"), '"at" is "+2026-11-29T10:00:00Z"'),
    (delivery(at="２０２６-11-29T10:00:00Z"), '"at" is "２０２６-11-29T10:00:00Z"'),
    (GOOD.replace(f'"{AT}"', "1764410400"), '"at" must be a string, not 1764410400'),
    (GOOD.replace('"user":"u_hostile",', ""), 'missing "user"'),
    (delivery(user=""), '"user" must be 1–256 bytes, not 0'),
    (delivery(user="u" * 257), '"user" must be 1–256 bytes, not 257'),
    (GOOD.replace('"u_hostile"', "42"), '"user" must be a string, not 42'),
    (delivery(extra=',"device":42'), '"device" must be a string, not 42'),
    (delivery(extra=',"device":["a"]'), '"device" must be a string'),
    # notification
    ('{"type":"notification","id":"bad","at":"2026-11-29T10:00:00Z","user":"u"}', 'notification has no "payload"'),
    (notification().replace('"payload":{', '"payload":[{').replace("}}}", "}}]}"), '"payload" must be an object, not an array'),
    ('{"type":"notification","id":"bad","at":"2026-11-29T10:00:00Z","user":"u","payload":"{\\"aps\\":{}}"}', '"payload" must be an object, not a string'),
    ('{"type":"notification","id":"bad","at":"2026-11-29T10:00:00Z","user":"u","payload":null}', '"payload" must be an object, not null'),
    ('{"type":"notification","id":"bad","at":"2026-11-29T10:00:00Z","user":"u","payload":{}}', '"payload" has no "aps" object'),
    ('{"type":"notification","id":"bad","at":"2026-11-29T10:00:00Z","user":"u","payload":{"APS":{}}}', '"payload" has no "aps" object'),
    (notification(aps='"Take out the bins"'), '"payload.aps" must be an object, not a string'),
    (notification(aps="[]"), '"payload.aps" must be an object, not an array'),
    (notification(aps="null"), '"payload.aps" must be an object, not null'),
    (notification(aps='{"thread-id":""}'), '"payload.aps.thread-id" must be 1–255 bytes, not 0'),
    (notification(aps='{"thread-id":"' + "t" * 256 + '"}'), '"payload.aps.thread-id" must be 1–255 bytes, not 256'),
    (notification(aps='{"thread-id":1103}'), '"payload.aps.thread-id" must be a string, not 1103'),
    (notification(aps='{"category":7}'), '"payload.aps.category" must be a string, not 7'),
    (notification(aps='{"alert":42}'), '"payload.aps.alert" must be a string or an object, not a number'),
    (notification(aps='{"alert":["a"]}'), '"payload.aps.alert" must be a string or an object, not an array'),
    (notification(aps='{"alert":true}'), '"payload.aps.alert" must be a string or an object, not a boolean'),
    (notification(aps='{"alert":{"title":1}}'), '"payload.aps.alert.title" must be a string, not 1'),
    (notification(aps='{"alert":{"subtitle":{}}}'), '"payload.aps.alert.subtitle" must be a string'),
    (notification(aps='{"alert":{"body":null}}'), '"payload.aps.alert.body" must be a string, not null'),
    (notification(payload_extra=',"task_id":"2002"'), '"payload.task_id" must be an integer, not "2002"'),
    (notification(payload_extra=',"task_id":null'), '"payload.task_id" must be an integer, not null'),
    (notification(payload_extra=',"button_types":"edit"'), '"payload.button_types" must be an array of strings'),
    (notification(payload_extra=',"button_types":["edit",1]'), '"payload.button_types" must be an array of strings'),
    (notification(payload_extra=',"button_types":[["edit"]]'), '"payload.button_types" must be an array of strings'),
    (notification(payload_extra=',"is_premium":"true"'), '"payload.is_premium" must be true or false, not "true"'),
    (notification(payload_extra=',"is_premium":1'), '"payload.is_premium" must be true or false, not 1'),
    (notification(payload_extra=',"is_premium":null'), '"payload.is_premium" must be true or false, not null'),
    (notification(payload_extra=',"task_name":5'), '"payload.task_name" must be a string, not 5'),
    (notification(payload_extra=',"residence_name":false'), '"payload.residence_name" must be a string, not false'),
    (notification(payload_extra=',"notification_type":[]'), '"payload.notification_type" must be a string'),
    (notification(extra=',"topic":5'), '"topic" must be a string, not 5'),
    (notification(extra=',"platform":5'), '"platform" must be a string, not 5'),
    (notification(extra=',"platform":"Android"'), '"platform" is "Android"; expected ios or android'),
    (notification(extra=',"platform":"fcm"'), '"platform" is "fcm"; expected ios or android'),
    # Android: the FCM message and its data map
    (fcm(data='"task_id=1101"'), '"payload.data" must be an object, not a string'),
    (fcm(data='[]'), '"payload.data" must be an object, not an array'),
    (fcm(payload_extra=',"android":"HIGH"'), '"payload.android" must be an object, not a string'),
    (fcm(payload_extra=',"android":{"data":[]}'), '"payload.android.data" must be an object, not an array'),
    (fcm(payload_extra=',"notification":"hi"'), '"payload.notification" must be an object, not a string'),
    (fcm(payload_extra=',"android":{"notification":null}'), '"payload.android.notification" must be an object, not null'),
    (fcm(payload_extra=',"notification":{"title":7}'), '"payload.notification.title" must be a string, not 7'),
    (fcm(payload_extra=',"android":{"notification":{"body":[]}}'), '"payload.android.notification.body" must be a string'),
    (fcm(data='{"task_id":"11o1"}'), '"payload.data.task_id" must be a string of decimal digits, not "11o1"'),
    (fcm(data='{"task_id":" 1101"}'), '"payload.data.task_id" must be a string of decimal digits, not " 1101"'),
    (fcm(data='{"task_id":"-1101"}'), '"payload.data.task_id" must be a string of decimal digits, not "-1101"'),
    (fcm(data='{"task_id":""}'), '"payload.data.task_id" must be a string of decimal digits, not ""'),
    (fcm(data='{"task_id":"9223372036854775808"}'), '"payload.data.task_id" must be a string of decimal digits'),
    (fcm(data='{"task_id":1101.5}'), '"payload.data.task_id" must be a string of decimal digits, not 1101.5'),
    (fcm(data='{"task_id":null}'), '"payload.data.task_id" must be a string of decimal digits, not null'),
    (fcm(data='{"is_premium":"True"}'), '"payload.data.is_premium" must be "true" or "false", not "True"'),
    (fcm(data='{"is_premium":"1"}'), '"payload.data.is_premium" must be "true" or "false", not "1"'),
    (fcm(data='{"is_premium":null}'), '"payload.data.is_premium" must be "true" or "false", not null'),
    (fcm(data='{"button_types":"complete,,cancel"}'), '"payload.data.button_types" must be a JSON array of names in a string'),
    (fcm(data='{"button_types":","}'), '"payload.data.button_types" must be a JSON array of names in a string'),
    (fcm(data='{"button_types":"[\\"complete\\""}'), '"payload.data.button_types" must be a JSON array of names in a string'),
    (fcm(data='{"button_types":"[1]"}'), '"payload.data.button_types" must be a JSON array of names in a string'),
    (fcm(data='{"button_types":"{\\"a\\":1}"}'), '"payload.data.button_types" must be a JSON array of names in a string'),
    (fcm(data='{"button_types":7}'), '"payload.data.button_types" must be a JSON array of names in a string'),
    (fcm(data='{"thread_id":""}'), '"payload.data.thread_id" must be 1–255 bytes, not 0'),
    (fcm(data='{"thread_id":"' + "t" * 256 + '"}'), '"payload.data.thread_id" must be 1–255 bytes, not 256'),
    (fcm(data='{"thread_id":1101}'), '"payload.data.thread_id" must be a string, not 1101'),
    (fcm(data='{"category":["TASK_ACTIONABLE"]}'), '"payload.data.category" must be a string'),
    (fcm(data='{"title":false}'), '"payload.data.title" must be a string, not false'),
    (fcm(data='{}', payload_extra=',"android":{"data":{"task_id":"x"}}'), '"payload.android.data.task_id" must be a string of decimal digits, not "x"'),
    (fcm(token=""), '"payload.token" must be 1–4096 bytes, not 0'),
    (fcm(token=None, payload_extra=',"token":42'), '"payload.token" must be a string, not 42'),
    (fcm(extra=',"device":"another-token"'), '"device" and "payload.token" are different tokens'),
    (fcm(extra=',"project":7'), '"project" must be a string, not 7'),
    (delivery(extra=',"message_id":7'), '"message_id" must be a string, not 7'),
    # action
    (action().replace('"task_id":1101,', ""), 'action has no "task_id"'),
    (action(task='"1101"'), '"task_id" must be an integer, not "1101"'),
    (action(task="null"), '"task_id" must be an integer, not null'),
    (action(task="1101.5"), '"task_id" must be an integer, not 1101.5'),
    (action().replace('"action":"open",', ""), 'missing "action"'),
    (action(act='"snooze"'), '"action" is "snooze"; expected one of'),
    (action(act='"Complete"'), '"action" is "Complete"'),
    (action(act='""'), '"action" is ""'),
    (action(act="1"), '"action" must be a string, not 1'),
    (action().replace(',"outcome":"ok"', ""), 'missing "outcome"'),
    (action(outcome='"maybe"'), '"outcome" is "maybe"; expected ok, rejected or failed'),
    (action(outcome='"OK"'), '"outcome" is "OK"'),
    (action(outcome="true"), '"outcome" must be a string, not true'),
    (action(extra=',"notification_id":""'), '"notification_id" must be 1–128 bytes, not 0'),
    (action(extra=',"notification_id":"' + "n" * 129 + '"'), '"notification_id" must be 1–128 bytes, not 129'),
    (action(extra=',"notification_id":7'), '"notification_id" must be a string, not 7'),
    (action(extra=',"thread_id":""'), '"thread_id" must be 1–255 bytes, not 0'),
    (action(extra=',"thread_id":"' + "t" * 256 + '"'), '"thread_id" must be 1–255 bytes, not 256'),
    (action(extra=',"thread_id":7'), '"thread_id" must be a string, not 7'),
    (action(extra=',"http_status":99'), '"http_status" must be an integer from 100 to 599, not 99'),
    (action(extra=',"http_status":600'), '"http_status" must be an integer from 100 to 599, not 600'),
    (action(extra=',"http_status":"409"'), '"http_status" must be an integer from 100 to 599, not "409"'),
    (action(extra=',"error":409'), '"error" must be a string, not 409'),
    (action(act='"edit"', extra=',"changes":[]'), '"changes" must be an object, not an array'),
    (action(act='"edit"', extra=',"changes":"due_date=2026-12-01"'), '"changes" must be an object, not a string'),
    (action(act='"edit"', extra=',"changes":null'), '"changes" must be an object, not null'),
    # delivery
    (GOOD.replace('"notification_id":"n-1",', ""), 'delivery has no "notification_id"'),
    (delivery(notification=""), '"notification_id" must be 1–128 bytes, not 0'),
    (delivery(notification="n" * 129), '"notification_id" must be 1–128 bytes, not 129'),
    (GOOD.replace('"n-1"', "1"), '"notification_id" must be a string, not 1'),
    (GOOD.replace(',"status":200', ""), 'delivery has no "status"'),
    (delivery(status="99"), "from 100 to 599, not 99"),
    (delivery(status="600"), "from 100 to 599, not 600"),
    (delivery(status="-1"), "from 100 to 599, not -1"),
    (delivery(status="200.5"), "from 100 to 599, not 200.5"),
    (delivery(extra=',"reason":410'), '"reason" must be a string, not 410'),
    # A reason quotes values: it must stay one line and plain text.
    (GOOD.replace('"delivery"', r'"ping\nping"'), '"type" is "ping'),
    (GOOD.replace('"delivery"', r'"\u001b[2Jping"'), '"type" is "'),
    (action(act=r'"snooze\r\nX-Injected: 1"'), '"action" is "snooze'),
    (delivery(at="2026-11-29T10:00:00Z\n"), '"at" is "2026-11-29T10:00:00Z'),
    (GOOD.replace('"delivery"', '"' + "p" * 5000 + '"'), '"type" is "ppp'),
]
write("rules", rules)

# Odd but valid events: every one must be stored, equal to its line as a JSON value.
def good(n, line):
    return line.replace("ID", f"accepted-{n}")


accepted = [
    delivery(id="ID", user="u_\U0001F600"),                          # 4-byte UTF-8
    delivery(id="ID", user="u_\U0010FFFF"),                          # the last code point
    delivery(id="ID", user="u_\uFFFF\uFFFE"),                        # noncharacters are still characters
    delivery(id="ID", user="u_\uFEFF"),                              # a BOM inside a string is U+FEFF
    delivery(id="ID", user="u_\u2028\u2029"),                        # raw line separators in a string
    delivery(id="ID", user="u_\x7f"),                                # DEL is not a JSON control character
    delivery(id="ID").replace('"u_hostile"', r'"u_\uD83D\uDE00\uDBFF\uDFFF"'),
    delivery(id="ID", extra=r',"note":"a\u0000b\"\\\/\b\f\n\r\t"'),
    delivery(id="ID", extra=',"x":1e-999,"y":-0,"z":1E+2,"w":0e99999,"v":1.5e308,"u":-1.5e-308'),
    delivery(id="ID", extra=',"x":123456789012345678901234567890'),
    delivery(id="ID", extra=',"":"empty key","\\u0000":"nul key"'),
    delivery(id="ID", extra=',"x":' + "[" * 63 + "]" * 63),          # 64 levels with the event
    ' { "type" : "delivery" ,\t"id" : "ID" , "at" : "2026-11-29T10:00:00Z" , "user" : "u_hostile" , "notification_id" : "n-1" , "status" : 200 } \t',
    '{"status":200,"notification_id":"n-1","user":"u_hostile","at":"2026-11-29T10:00:00Z","id":"ID","type":"delivery"}',
    delivery(id="ID", at="2026-11-29t10:00:00.123456789-23:59"),
    delivery(id="ID", at="0000-01-01T00:00:00Z"),
    delivery(id="ID", at="9999-12-31T23:59:59.999999Z"),
    delivery(id="ID", at="2024-02-29T10:00:00Z"),
    delivery(id="ID", at="2026-12-31T23:59:60Z"),
    delivery(id="ID", status="100"),
    delivery(id="ID", status="599"),
    action(id="ID", task="-9223372036854775808"),
    action(id="ID", task="9223372036854775807", act='"edit"', extra=',"changes":{}'),
    notification(id="ID", aps="{}", payload_extra=',"button_types":[],"is_premium":false,"task_id":-0'),
    fcm(id="ID", data="{}"),                                           # an empty data map
    fcm(id="ID", token=None, data='{"task_id":"0001101"}', payload_extra=',"topic":"all"'),
    fcm(id="ID", data='{"task_id":1101,"is_premium":true,"button_types":["complete"],"google.x":1}'),
    fcm(id="ID", data='{"button_types":"[]"}', payload_extra=',"android":{"data":{},"notification":{}},"notification":{}'),
    fcm(id="ID", data='{"button_types":" complete , cancel "}', extra=',"device":"cHoStIlE:APA91bHostileToken"'),
    delivery(id="ID", status="404", extra=',"reason":"UNREGISTERED","message_id":""'),
    '{"type":"delivery","id":"ID","at":"2026-11-29T10:00:00Z","user":"u_hostile","notification_id":"n-1","status":200}\r',
]
with open(os.path.join(HERE, "accepted.ndjson"), "wb") as f:
    for n, line in enumerate(accepted, 1):
        f.write(good(n, line).encode() + b"\n")

# Mangled .apns files, as people make them by hand.
APNS = os.path.join(HERE, "apns")
os.makedirs(APNS, exist_ok=True)
PRETTY = """{
    "Simulator Target Bundle": "com.tt.honeyDue.honeyDueDev",
    "aps": {
        "alert": {
            "title": "Due soon: Replace upstairs HVAC filter",
            "body": "Replace upstairs HVAC filter is due Thu, Nov 19."
        },
        "category": "TASK_ACTIONABLE",
        "thread-id": "task-2002"
    },
    "task_id": 2002,
    "is_premium": true
}
"""
apns = {
    "trailing-comma.apns": (PRETTY.replace('"is_premium": true', '"is_premium": true,'), "invalid JSON"),
    "trailing-comma-in-aps.apns": (PRETTY.replace('"thread-id": "task-2002"', '"thread-id": "task-2002",'), "invalid JSON"),
    "comment.apns": ("// Drag onto the simulator\n" + PRETTY, "invalid JSON"),
    "single-quotes.apns": (PRETTY.replace('"', "'"), "invalid JSON"),
    "unquoted-keys.apns": (PRETTY.replace('"aps":', "aps:"), "invalid JSON"),
    "missing-brace.apns": (PRETTY.rstrip()[:-1], "invalid JSON"),
    "two-payloads.apns": (PRETTY + PRETTY, "invalid JSON"),
    "smart-quotes.apns": (PRETTY.replace('"task_id"', "\u201ctask_id\u201d"), "invalid JSON"),
    "empty.apns": ("", "invalid JSON"),
    "whitespace.apns": ("  \n\t\n", "invalid JSON"),
    "bom.apns": ("\ufeff" + PRETTY, "invalid JSON"),
    "duplicate-key.apns": (PRETTY.replace('"task_id": 2002,', '"task_id": 2002,\n    "task_id": 2003,'), "duplicate key"),
    "number-too-large.apns": (PRETTY.replace("2002,", "1e999,"), "too large"),
    "array.apns": ("[" + PRETTY + "]", "must hold a JSON object"),
    "string.apns": (json.dumps(PRETTY), "must hold a JSON object"),
    "no-aps.apns": (PRETTY.replace('"aps"', '"APS"'), '"payload" has no "aps" object'),
    "aps-string.apns": ('{"Simulator Target Bundle":"com.example","aps":"Hello"}', '"payload.aps" must be an object, not a string'),
    "alert-number.apns": ('{"aps":{"alert":42}}', '"payload.aps.alert" must be a string or an object'),
    "task-id-string.apns": (PRETTY.replace("2002,", '"2002",'), '"payload.task_id" must be an integer, not "2002"'),
    "thread-id-too-long.apns": (PRETTY.replace('"task-2002"', '"' + "t" * 256 + '"'), '"payload.aps.thread-id" must be 1–255 bytes, not 256'),
    "lone-surrogate.apns": (PRETTY.replace("HVAC filter\"", "HVAC filter \\uD800\""), "lone high surrogate"),
}
binary = {
    "latin1.apns": (PRETTY.replace("Due soon", "Échéance").encode("latin-1"), "UTF-8"),
    "utf16.apns": (PRETTY.encode("utf-16"), "invalid JSON"),
    "nul.apns": (PRETTY.encode() + b"\x00", "invalid JSON"),
    "truncated.apns": (PRETTY.encode()[:100], "invalid JSON"),
}
with open(os.path.join(APNS, "reasons.txt"), "w", encoding="utf-8") as index:
    for name, (text, reason) in sorted(apns.items()):
        with open(os.path.join(APNS, name), "w", encoding="utf-8", newline="") as f:
            f.write(text)
        index.write(f"{name}\t{reason}\n")
    for name, (data, reason) in sorted(binary.items()):
        with open(os.path.join(APNS, name), "wb") as f:
            f.write(data)
        index.write(f"{name}\t{reason}\n")
