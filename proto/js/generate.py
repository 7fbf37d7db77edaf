#!/usr/bin/env python3
"""Generates the JavaScript protobuf module from a FileDescriptorSet.

    python3 proto/js/generate.py DESCRIPTOR_SET OUT_DIR

Writes OUT_DIR/showroom.js: one ES module with every message and enum of every file in the set,
as nested objects by package (showroom.wire.Envelope ...), importing the hand-written
./runtime.js next to it. proto/generate-js.sh runs it; proto/README.md ("JavaScript") describes
the mapping. Standard library only: the descriptor set is read by the small protobuf reader below.
The output depends on nothing but the descriptor set (files sorted by name, then declaration
order), so it can be checked by regenerating and comparing.
"""

import re
import sys
from pathlib import Path

# --- reading the descriptor set ----------------------------------------------------------------


class DescriptorError(Exception):
    pass


def read_varint(buf, pos):
    value = 0
    for shift in range(0, 70, 7):
        if pos >= len(buf):
            raise DescriptorError("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
    raise DescriptorError("varint longer than 10 bytes")


def read_fields(buf):
    """Yields (field number, value): varints as int, length-delimited fields as bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, pos = read_varint(buf, pos)
        elif wire_type == 2:
            n, pos = read_varint(buf, pos)
            if pos + n > len(buf):
                raise DescriptorError("length past the end")
            value, pos = bytes(buf[pos : pos + n]), pos + n
        elif wire_type in (1, 5):
            pos += 8 if wire_type == 1 else 4
            continue
        else:
            raise DescriptorError(f"unexpected wire type {wire_type}")
        yield number, value


# The parts of descriptor.proto used here: field number -> (name, kind, repeated), kind being
# "string", "int" (int32: negative values arrive as 64-bit two's complement), "bool" or a
# nested schema. Fields not listed are skipped.
ENUM_VALUE = {1: ("name", "string", False), 2: ("number", "int", False)}
ENUM = {1: ("name", "string", False), 2: ("value", ENUM_VALUE, True)}
FIELD_OPTIONS = {2: ("packed", "bool", False)}
FIELD = {
    1: ("name", "string", False),
    3: ("number", "int", False),
    4: ("label", "int", False),
    5: ("type", "int", False),
    6: ("type_name", "string", False),
    8: ("options", FIELD_OPTIONS, False),
    9: ("oneof_index", "int", False),
    10: ("json_name", "string", False),
    17: ("proto3_optional", "bool", False),
}
ONEOF = {1: ("name", "string", False)}
MESSAGE_OPTIONS = {7: ("map_entry", "bool", False)}
MESSAGE = {
    1: ("name", "string", False),
    2: ("field", FIELD, True),
    4: ("enum_type", ENUM, True),
    7: ("options", MESSAGE_OPTIONS, False),
    8: ("oneof_decl", ONEOF, True),
}
MESSAGE[3] = ("nested_type", MESSAGE, True)
FILE = {
    1: ("name", "string", False),
    2: ("package", "string", False),
    3: ("dependency", "string", True),
    4: ("message_type", MESSAGE, True),
    5: ("enum_type", ENUM, True),
    12: ("syntax", "string", False),
}
FILE_SET = {1: ("file", FILE, True)}


def parse(buf, schema):
    """Decodes a message; every listed field is present (None when absent and not repeated)."""
    out = {name: [] if repeated else None for name, _, repeated in schema.values()}
    for number, value in read_fields(buf):
        if number not in schema:
            continue
        name, kind, repeated = schema[number]
        if isinstance(value, bytes) == (kind in ("int", "bool")):
            raise DescriptorError(f"field {name} has the wrong wire type")
        if kind == "string":
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError as e:
                raise DescriptorError(f"field {name} is not UTF-8") from e
        elif kind == "int":
            value = value - (1 << 64) if value >= 1 << 63 else value
        elif kind == "bool":
            value = value != 0
        else:
            value = parse(value, kind)
        if repeated:
            out[name].append(value)
        else:
            out[name] = value
    return out


# --- the model -----------------------------------------------------------------------------------

# FieldDescriptorProto.Type -> (JS default, writer/reader method, wire type); 64-bit ones are BigInt.
SCALARS = {
    1: ("0", "double", 1),
    2: ("0", "float", 5),
    3: ("0n", "int64", 0),
    4: ("0n", "uint64", 0),
    5: ("0", "int32", 0),
    6: ("0n", "fixed64", 1),
    7: ("0", "fixed32", 5),
    8: ("false", "bool", 0),
    9: ("''", "string", 2),
    12: ("$E", "bytes", 2),
    13: ("0", "uint32", 0),
    15: ("0", "sfixed32", 5),
    16: ("0n", "sfixed64", 1),
    17: ("0", "sint32", 0),
    18: ("0n", "sint64", 0),
}
TYPE_GROUP, TYPE_MESSAGE, TYPE_ENUM = 10, 11, 14
LABEL_REPEATED = 3
# Map keys arrive as object keys (strings): how each key type gets its value back.
KEY_FROM_STRING = {"string": "k", "bool": "$keyBool(k)"}
for _t in ("int32", "uint32", "sint32", "fixed32", "sfixed32"):
    KEY_FROM_STRING[_t] = "$key32(k)"
for _t in ("int64", "uint64", "sint64", "fixed64", "sfixed64"):
    KEY_FROM_STRING[_t] = "$key64(k)"
RESERVED_MESSAGE_PROPERTIES = {"create", "encode", "decode", "typeName"}
JS_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class GenerateError(Exception):
    pass


def json_name(name):
    """protoc's lowerCamelCase: underscores dropped, the letter after one upper-cased."""
    out, upper = [], False
    for c in name:
        if c == "_":
            upper = True
        else:
            out.append(c.upper() if upper else c)
            upper = False
    return "".join(out)


def js_id(full_name):
    # '$' cannot occur in a proto name, so the identifiers of two types never collide.
    return full_name.replace(".", "$")


class Model:
    def __init__(self, file_set):
        if not file_set["file"]:
            raise GenerateError("the descriptor set holds no files")
        self.files = sorted(file_set["file"], key=lambda f: f["name"])
        self.messages = {}  # full name -> (descriptor, file name)
        self.enums = {}
        for f in self.files:
            if f["syntax"] != "proto3":
                raise GenerateError(f"{f['name']}: only proto3 is supported (syntax is {f['syntax'] or 'proto2'})")
            if not f["package"]:
                raise GenerateError(f"{f['name']}: a package is required")
            for m in f["message_type"]:
                self.add_message(f"{f['package']}.{m['name']}", m, f["name"])
            for e in f["enum_type"]:
                self.enums[f"{f['package']}.{e['name']}"] = (e, f["name"])

    def add_message(self, full_name, m, file_name):
        self.messages[full_name] = (m, file_name)
        for n in m["nested_type"]:
            self.add_message(f"{full_name}.{n['name']}", n, file_name)
        for e in m["enum_type"]:
            self.enums[f"{full_name}.{e['name']}"] = (e, file_name)

    def is_map_entry(self, full_name):
        m = self.messages[full_name][0]
        return bool(m["options"] and m["options"]["map_entry"])

    def resolve(self, type_name):
        name = type_name.lstrip(".")
        if name not in self.messages and name not in self.enums:
            raise GenerateError(f"unresolved type {type_name}")
        return name


class Field:
    """One field of a message, as the generated code needs it."""

    def __init__(self, model, owner, f):
        self.name = f["name"]
        self.number = f["number"]
        self.js = f["json_name"] or json_name(f["name"])
        self.repeated = f["label"] == LABEL_REPEATED
        self.optional = bool(f["proto3_optional"])
        self.oneof = None  # index of a real (not synthetic) oneof
        if f["oneof_index"] is not None and not self.optional:
            self.oneof = f["oneof_index"]
        self.map = None  # (key Field, value Field)
        t = f["type"]
        if t == TYPE_GROUP:
            raise GenerateError(f"{owner}.{self.name}: groups are not supported")
        self.kind = "message" if t == TYPE_MESSAGE else "enum" if t == TYPE_ENUM else "scalar"
        self.target = model.resolve(f["type_name"]) if self.kind != "scalar" else None
        if self.kind == "message" and self.repeated and model.is_map_entry(self.target):
            entry = model.messages[self.target][0]
            by_number = {x["number"]: Field(model, self.target, x) for x in entry["field"]}
            self.map = (by_number[1], by_number[2])
        if self.kind == "scalar":
            self.default, self.method, self.wire_type = SCALARS[t]
        elif self.kind == "enum":
            self.default, self.method, self.wire_type = "0", "int32", 0
        else:
            self.default, self.method, self.wire_type = "null", None, 2
        # proto3 packs repeated numbers unless [packed = false] says otherwise.
        self.packed = (
            self.repeated and self.wire_type != 2 and not (f["options"] and f["options"]["packed"] is False)
        )

    def tag(self, wire_type=None):
        return (self.number << 3) | (self.wire_type if wire_type is None else wire_type)

    def initial(self):
        if self.map:
            return "{}"
        if self.repeated:
            return "[]"
        if self.optional:
            return "null"
        return self.default

    def present(self, first, v="v"):
        """The JS condition under which a singular field's value is written: `first` evaluates
        it (e.g. assigns it to v), `v` names it afterwards."""
        if self.optional or self.kind == "message":
            return f"{first} != null"
        if self.method == "bytes":
            return f"{first} && {v}.length"
        if self.method in ("float", "double"):
            # -0 and NaN are not the default: written, as protobuf does.
            return f"{first} != null && ({v} !== 0 || 1 / {v} < 0)"
        return first


# --- code generation -----------------------------------------------------------------------------


def message_code(model, full_name):
    m, _ = model.messages[full_name]
    ident = js_id(full_name)
    fields = [Field(model, full_name, f) for f in m["field"]]
    by_number = sorted(fields, key=lambda f: f.number)
    oneofs = {}  # real oneof index -> (case property, [fields])
    for f in fields:
        if f.oneof is not None:
            case = json_name(m["oneof_decl"][f.oneof]["name"])
            oneofs.setdefault(f.oneof, (case, []))[1].append(f)
    properties = [f.js for f in fields] + [case for case, _ in oneofs.values()]
    if len(set(properties)) != len(properties):
        raise GenerateError(f"{full_name}: two fields (or a field and a oneof) share a JavaScript name")
    for p in properties:
        if not JS_IDENTIFIER.match(p) or p == "__proto__":
            raise GenerateError(f"{full_name}: field name {p!r} cannot be a JavaScript property")

    out = [f"// {full_name}"]

    # new: every field at its default; a oneof's case property after its last member.
    parts = []
    last_member = {members[-1].js: case for case, members in oneofs.values()}
    for f in fields:
        parts.append(f"{f.js}: {f.initial()}")
        if f.js in last_member:
            parts.append(f"{last_member[f.js]}: null")
    out.append(f"function {ident}$new() {{")
    one_line = f"  return {{ {', '.join(parts)} }};" if parts else "  return {};"
    if len(one_line) <= 100:
        out.append(one_line)
    else:
        out += ["  return {", *(f"    {p}," for p in parts), "  };"]
    out.append("}")

    # Resetting a oneof when another of its members arrives.
    for index, (case, members) in sorted(oneofs.items()):
        resets = " ".join(f"m.{f.js} = {f.initial()};" for f in members)
        out.append(f"function {ident}$clear{index}(m) {{ {resets} }}")

    # enc: fields in number order, defaults skipped.
    out.append(f"function {ident}$enc(m, w) {{")
    if fields:
        out.append("  let v;")
    for index, (case, _) in sorted(oneofs.items()):
        out.append(f"  const c{index} = m.{case};")
    for f in by_number:
        out.extend("  " + line for line in encode_lines(f, oneofs))
    out.append("}")

    # dec: into `m`, a new object or (a sub-message field sent twice, which protobuf merges) the
    # value read before.
    out.append(f"function {ident}$dec(r, m) {{")
    out.append("  while (r.pos < r.end) {")
    out.append("    const t = r.tag();")
    if fields:
        out.append("    switch (t >>> 3) {")
        for f in by_number:
            out.extend("      " + line for line in decode_lines(f, oneofs, ident))
        out.append("      default: r.skip(t);")
        out.append("    }")
    else:
        out.append("    r.skip(t);")
    out.append("  }")
    out.append("  return m;")
    out.append("}")
    return out


def write_value(f, v, may_be_null=False):
    """A statement writing value `v` of field `f` (tag included); a null sub-message (a oneof
    member its case property names) is written empty."""
    if f.kind == "message":
        target = js_id(f.target)
        call = f"if ({v} != null) {target}$enc({v}, w);" if may_be_null else f"{target}$enc({v}, w);"
        return f"{{ const p = w.fork({f.tag()}); {call} w.ldelim(p); }}"
    return f"w.uint32({f.tag()}).{f.method}({v});"


def encode_lines(f, oneofs):
    if f.map:
        key, value = f.map
        k = KEY_FROM_STRING[key.method]
        if value.kind == "message":
            val = f"{{ const q = w.fork({value.tag()}); if (x != null) {js_id(value.target)}$enc(x, w); w.ldelim(q); }}"
        else:
            val = f"w.uint32({value.tag()}).{value.method}(x);"
        # Key and value are both written, defaults included, as protobuf's own runtimes do.
        return [
            f"if ((v = m.{f.js})) for (const k of Object.keys(v)) {{",
            f"  const x = v[k], p = w.fork({f.tag()});",
            f"  w.uint32({key.tag()}).{key.method}({k}); {val}",
            "  w.ldelim(p);",
            "}",
        ]
    if f.repeated:
        if f.packed:
            return [
                f"if ((v = m.{f.js}) && v.length) {{",
                f"  const p = w.fork({f.tag(2)});",
                f"  for (let i = 0; i < v.length; i++) w.{f.method}(v[i]);",
                "  w.ldelim(p);",
                "}",
            ]
        return [f"if ((v = m.{f.js})) for (let i = 0; i < v.length; i++) {write_value(f, 'v[i]')}"]
    if f.oneof is not None:
        # Written when the case property names it, or (no case given) when it holds a value.
        case = f"c{f.oneof}"
        value = "v" if f.kind == "message" else f"v ?? {f.default}"
        return [
            f"v = m.{f.js};",
            f"if ({case} === '{f.js}' || ({case} == null && {f.present('v')})) {write_value(f, value, True)}",
        ]
    return [f"if ({f.present(f'(v = m.{f.js})')}) {write_value(f, 'v')}"]


def read_value(f, into):
    """Statements reading one value of `f` (its wire type checked) into the expression `into`,
    which is "m.x = " / "m.x.push(" style: `into` is a format string with {} for the value."""
    if f.kind == "message":
        target = js_id(f.target)
        return ["r.want(t, 2);", "const p = r.down();", into.format(f"{target}$dec(r, {target}$new())") + ";", "r.up(p);"]
    return [f"r.want(t, {f.wire_type});", into.format(f"r.{f.method}()") + ";"]


def decode_lines(f, oneofs, ident):
    head = f"case {f.number}: "
    if f.map:
        key, value = f.map
        kv = key.initial()
        if value.kind == "message":
            target = js_id(value.target)
            read_v = f"case 2: {{ r.want(u, 2); const q = r.down(); x = {target}$dec(r, x ?? {target}$new()); r.up(q); break; }}"
            fill = f" if (x === null) x = {target}$new();"
            xv = "null"
        else:
            read_v = f"case 2: r.want(u, {value.wire_type}); x = r.{value.method}(); break;"
            fill = ""
            xv = value.initial()
        store = f"$mapSet(m.{f.js}, k, x);" if key.method == "string" else f"m.{f.js}[k] = x;"
        return [
            head + "{",
            "  r.want(t, 2);",
            "  const p = r.push();",
            f"  let k = {kv}, x = {xv};",
            "  while (r.pos < r.end) {",
            "    const u = r.tag();",
            "    switch (u >>> 3) {",
            f"      case 1: r.want(u, {key.wire_type}); k = r.{key.method}(); break;",
            f"      {read_v}",
            "      default: r.skip(u);",
            "    }",
            "  }",
            f"  r.end = p;{fill}",
            f"  {store}",
            "  break;",
            "}",
        ]
    if f.repeated:
        push = f"m.{f.js}.push({{}})"
        if f.wire_type != 2:
            # Packed and unpacked are both accepted, whatever the field's own encoding.
            return [
                head + "if ((t & 7) === 2) {",
                "  const p = r.push();",
                f"  while (r.pos < r.end) m.{f.js}.push(r.{f.method}());",
                "  r.end = p;",
                f"}} else {{ r.want(t, {f.wire_type}); m.{f.js}.push(r.{f.method}()); }} break;",
            ]
        return [head + "{ " + " ".join(read_value(f, push)) + " break; }"]
    if f.oneof is not None:
        case = oneofs[f.oneof][0]
        reset = f"if (m.{case} !== '{f.js}') {ident}$clear{f.oneof}(m);"
        if f.kind == "message":
            target = js_id(f.target)
            body = [
                "r.want(t, 2);",
                reset,
                "const p = r.down();",
                f"m.{f.js} = {target}$dec(r, m.{f.js} ?? {target}$new());",
                "r.up(p);",
            ]
        else:
            body = [f"r.want(t, {f.wire_type});", reset, f"m.{f.js} = r.{f.method}();"]
        return [head + "{ " + " ".join(body) + f" m.{case} = '{f.js}'; break; }}"]
    if f.kind == "message":
        # A sub-message that occurs twice is merged, as protobuf does.
        target = js_id(f.target)
        body = ["r.want(t, 2);", "const p = r.down();", f"m.{f.js} = {target}$dec(r, m.{f.js} ?? {target}$new());", "r.up(p);"]
        return [head + "{ " + " ".join(body) + " break; }"]
    return [head + " ".join(read_value(f, f"m.{f.js} = {{}}")) + " break;"]


def enum_code(model, full_name):
    e, _ = model.enums[full_name]
    if not e["value"]:
        raise GenerateError(f"{full_name}: an enum needs values")
    for v in e["value"]:
        if v["name"] == "nameOf":
            raise GenerateError(f"{full_name}: an enum value cannot be named nameOf")
    values = [f"  {v['name']}: {v['number']}," for v in e["value"]]
    return [f"// {full_name}", f"const {js_id(full_name)} = $enum({{", *values, "});"]


def generate(file_set):
    model = Model(file_set)
    lines = [
        "// Generated by proto/generate-js.sh: do not edit. Change the .proto file and run",
        '// proto/generate-js.sh. The mapping is described in proto/README.md, "JavaScript"; the',
        "// runtime is ./runtime.js. Generated from (paths under proto/):",
        "//",
    ]
    lines += [f"//   {f['name']}" for f in model.files]
    lines += [
        "",
        "import {",
        "  message as $message, enumType as $enum, EMPTY_BYTES as $E,",
        "  key32 as $key32, key64 as $key64, keyBool as $keyBool, mapSet as $mapSet,",
        "} from './runtime.js';",
    ]

    # Functions and enums, file by file in declaration order (a message before its nested types).
    for f in model.files:
        names = [n for n, (_, file_name) in model.messages.items() if file_name == f["name"]]
        enums = [n for n, (_, file_name) in model.enums.items() if file_name == f["name"]]
        if not names and not enums:
            continue
        lines += ["", f"// --- {f['name']} (package {f['package']})"]
        for n in enums:
            lines += [""] + enum_code(model, n)
        for n in names:
            if not model.is_map_entry(n):
                lines += [""] + message_code(model, n)

    # Type objects, nested types first so that each parent can take them.
    lines += ["", "// --- types"]
    children = {}
    for n in list(model.messages) + list(model.enums):
        if n in model.messages and model.is_map_entry(n):
            continue
        parent = n.rsplit(".", 1)[0]
        if parent in model.messages:
            children.setdefault(parent, []).append(n)

    def emit_message(n):
        for c in children.get(n, []):
            if c in model.messages:
                emit_message(c)
        nested = ""
        if n in children:
            for c in children[n]:
                short = c.rsplit(".", 1)[1]
                if short in RESERVED_MESSAGE_PROPERTIES:
                    raise GenerateError(f"{c}: a nested type cannot be named {short}")
            nested = ", { " + ", ".join(f"{c.rsplit('.', 1)[1]}: {js_id(c)}" for c in children[n]) + " }"
        i = js_id(n)
        lines.append(f"const {i} = $message('{n}', {i}$new, {i}$enc, {i}$dec{nested});")

    top_level = []
    for n in model.messages:
        if not model.is_map_entry(n) and n.rsplit(".", 1)[0] not in model.messages:
            emit_message(n)
            top_level.append(n)
    top_level += [n for n in model.enums if n.rsplit(".", 1)[0] not in model.messages]

    # Namespaces: packages as nested objects, sorted by name; types in declaration order.
    tree = {}
    for n in top_level:
        package, short = n.rsplit(".", 1)
        node = tree
        for part in package.split("."):
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise GenerateError(f"package {package} collides with type {n}")
        if short in node:
            raise GenerateError(f"{n} collides with a package of the same name")
        node[short] = js_id(n)

    def render(node, indent):
        pad = "  " * (indent + 1)
        items = []
        for key in sorted(k for k, v in node.items() if isinstance(v, dict)):
            items.append(f"{pad}{key}: {render(node[key], indent + 1)},")
        items += [f"{pad}{k}: {v}," for k, v in node.items() if not isinstance(v, dict)]
        return "Object.freeze({\n" + "\n".join(items) + "\n" + "  " * indent + "})"

    lines.append("")
    for root in sorted(tree):
        if not JS_IDENTIFIER.match(root):
            raise GenerateError(f"package root {root!r} is not a JavaScript identifier")
        lines.append(f"export const {root} = {render(tree[root], 0)};")
    return "\n".join(lines) + "\n"


def main(argv):
    if len(argv) != 3:
        print("usage: generate.py DESCRIPTOR_SET OUT_DIR", file=sys.stderr)
        return 2
    try:
        file_set = parse(Path(argv[1]).read_bytes(), FILE_SET)
        code = generate(file_set)
    except (DescriptorError, GenerateError) as e:
        print(f"generate.py: error: {e}", file=sys.stderr)
        return 1
    out_dir = Path(argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "showroom.js").write_text(code, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
