// The protobuf runtime of the generated module showroom.js: a writer, a reader and the two
// factories the generated code builds its types with. Hand-written (not generated); plain ES
// module, no dependencies, for browsers and Node.
//
// Mapping (proto/README.md, "JavaScript"): 64-bit integers decode to BigInt and encode from a
// BigInt or a safe-integer Number; bytes decode to a Uint8Array that is a view of the input
// (copy it to keep it past the input's lifetime); absent sub-messages and proto3 `optional`
// fields decode to null.

const MAX_DEPTH = 100; // nesting limit, as protobuf's own parsers have
const TWO_32 = 4294967296;
const MASK_32 = 0xffffffffn;
const MAX_U64 = 0xffffffffffffffffn;
const MIN_I64 = -0x8000000000000000n;
const MAX_I64 = 0x7fffffffffffffffn;
const TWO_64 = 0x10000000000000000n;

const utf8Encoder = new TextEncoder();
// fatal: invalid UTF-8 is an error, as in every proto3 implementation; ignoreBOM: a leading
// U+FEFF is part of the string, not a byte-order mark.
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const scratch = new DataView(new ArrayBuffer(8));

/** The shared default of bytes fields: empty, so nothing can be written into it. */
export const EMPTY_BYTES = new Uint8Array(0);

function toBigInt(v, type) {
    if (typeof v === 'bigint') return v;
    if (Number.isSafeInteger(v)) return BigInt(v);
    throw new TypeError(`${type}: expected a BigInt or a safe integer Number, got ${typeof v === 'number' ? v : typeof v}`);
}

function checkRange(x, min, max, type) {
    if (x < min || x > max) throw new RangeError(`${type}: ${x} is out of range`);
    return x;
}

// Whether a Number can take the one-varint fast path of a 64-bit field.
function isSmallUint(v) {
    return typeof v === 'number' && v >= 0 && v <= 0xffffffff && Number.isInteger(v);
}

/**
 * Encodes into one growable buffer. A length-delimited field (sub-message, packed run, string)
 * reserves one byte for its length and moves its content when the length needs more.
 */
export class Writer {
    constructor(size = 256) {
        this.buf = new Uint8Array(size);
        this.pos = 0;
        this.depth = 0;
    }

    ensure(n) {
        if (this.pos + n > this.buf.length) {
            const grown = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
            grown.set(this.buf.subarray(0, this.pos));
            this.buf = grown;
        }
    }

    uint32(v) {
        v >>>= 0;
        this.ensure(5);
        const b = this.buf;
        let p = this.pos;
        while (v > 127) {
            b[p++] = (v & 127) | 128;
            v >>>= 7;
        }
        b[p++] = v;
        this.pos = p;
        return this;
    }

    // lo and hi: the two unsigned 32-bit halves of a 64-bit varint.
    varint64(lo, hi) {
        this.ensure(10);
        const b = this.buf;
        let p = this.pos;
        while (hi !== 0) {
            b[p++] = (lo & 127) | 128;
            lo = ((lo >>> 7) | (hi << 25)) >>> 0;
            hi >>>= 7;
        }
        while (lo > 127) {
            b[p++] = (lo & 127) | 128;
            lo >>>= 7;
        }
        b[p++] = lo;
        this.pos = p;
        return this;
    }

    // Negative values take 10 bytes (sign-extended to 64 bits), as in every protobuf runtime.
    int32(v) {
        v |= 0;
        return v >= 0 ? this.uint32(v) : this.varint64(v >>> 0, 0xffffffff);
    }

    sint32(v) {
        v |= 0;
        return this.uint32((v << 1) ^ (v >> 31));
    }

    bool(v) {
        this.ensure(1);
        this.buf[this.pos++] = v ? 1 : 0;
        return this;
    }

    uint64(v) {
        if (isSmallUint(v)) return this.uint32(v);
        const x = checkRange(toBigInt(v, 'uint64'), 0n, MAX_U64, 'uint64');
        return this.varint64(Number(x & MASK_32), Number(x >> 32n));
    }

    int64(v) {
        if (isSmallUint(v)) return this.uint32(v);
        const x = BigInt.asUintN(64, checkRange(toBigInt(v, 'int64'), MIN_I64, MAX_I64, 'int64'));
        return this.varint64(Number(x & MASK_32), Number(x >> 32n));
    }

    sint64(v) {
        const s = checkRange(toBigInt(v, 'sint64'), MIN_I64, MAX_I64, 'sint64');
        const x = BigInt.asUintN(64, (s << 1n) ^ (s >> 63n));
        return this.varint64(Number(x & MASK_32), Number(x >> 32n));
    }

    fixed32(v) {
        v >>>= 0;
        this.ensure(4);
        const b = this.buf;
        const p = this.pos;
        b[p] = v;
        b[p + 1] = v >>> 8;
        b[p + 2] = v >>> 16;
        b[p + 3] = v >>> 24;
        this.pos = p + 4;
        return this;
    }

    sfixed32(v) {
        return this.fixed32(v);
    }

    fixed64(v) {
        const x = checkRange(toBigInt(v, 'fixed64'), 0n, MAX_U64, 'fixed64');
        return this.fixed32(Number(x & MASK_32)).fixed32(Number(x >> 32n));
    }

    sfixed64(v) {
        const x = BigInt.asUintN(64, checkRange(toBigInt(v, 'sfixed64'), MIN_I64, MAX_I64, 'sfixed64'));
        return this.fixed32(Number(x & MASK_32)).fixed32(Number(x >> 32n));
    }

    float(v) {
        scratch.setFloat32(0, v, true);
        return this.fixed32(scratch.getUint32(0, true));
    }

    double(v) {
        scratch.setFloat64(0, v, true);
        return this.fixed32(scratch.getUint32(0, true)).fixed32(scratch.getUint32(4, true));
    }

    bytes(v) {
        const n = v.length;
        this.uint32(n);
        this.ensure(n);
        this.buf.set(v, this.pos);
        this.pos += n;
        return this;
    }

    string(s) {
        if (typeof s !== 'string') throw new TypeError(`string field: expected a string, got ${typeof s}`);
        const n = s.length;
        // Worst case 3 bytes per UTF-16 unit, plus the length.
        this.ensure(3 * n + 5);
        const b = this.buf;
        const start = this.pos;
        if (n < 128) {
            // Short ASCII (most names and ids): one pass, no encoder call.
            let i = 0;
            for (; i < n; i++) {
                const c = s.charCodeAt(i);
                if (c >= 128) break;
                b[start + 1 + i] = c;
            }
            if (i === n) {
                b[start] = n;
                this.pos = start + 1 + n;
                return this;
            }
        }
        this.pos = start + 1 + utf8Encoder.encodeInto(s, b.subarray(start + 1)).written;
        return this.patchLength(start);
    }

    /** Writes a tag and reserves a length byte; returns the position to hand to ldelim. */
    fork(tag) {
        if (++this.depth > MAX_DEPTH) throw new Error(`protobuf encode: messages nested deeper than ${MAX_DEPTH} levels (a cycle?)`);
        this.uint32(tag);
        this.ensure(1);
        return this.pos++;
    }

    ldelim(start) {
        this.depth--;
        return this.patchLength(start);
    }

    // The content after the reserved byte at `start` is complete: write its length there,
    // moving the content when the length takes more than one byte.
    patchLength(start) {
        const len = this.pos - start - 1;
        if (len < 128) {
            this.buf[start] = len;
            return this;
        }
        const n = len < 1 << 14 ? 2 : len < 1 << 21 ? 3 : len < 1 << 28 ? 4 : 5;
        this.ensure(n - 1);
        const b = this.buf;
        b.copyWithin(start + n, start + 1, this.pos);
        let p = start;
        let x = len;
        while (x > 127) {
            b[p++] = (x & 127) | 128;
            x >>>= 7;
        }
        b[p] = x;
        this.pos += n - 1;
        return this;
    }

    finish() {
        return this.buf.slice(0, this.pos);
    }
}

// One writer is kept between encodes (not when it grew large), so encoding costs one
// allocation: the result.
let spareWriter = null;

function takeWriter() {
    const w = spareWriter ?? new Writer();
    spareWriter = null;
    w.pos = 0;
    w.depth = 0;
    return w;
}

function releaseWriter(w) {
    if (w.buf.length <= 65536) spareWriter = w;
}

/**
 * Decodes from a Uint8Array. `end` is the end of the message being read (a sub-message's end
 * while inside it): nothing is read past it, and every length is checked against it before
 * it is used. Errors name the type being decoded and the byte offset.
 */
export class Reader {
    constructor(bytes, typeName) {
        if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
        else if (!(bytes instanceof Uint8Array)) throw new TypeError(`${typeName}.decode: expected a Uint8Array or an ArrayBuffer`);
        // A plain view, so that bytes fields of a Node Buffer's message are plain Uint8Arrays too.
        else if (bytes.constructor !== Uint8Array) bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        this.buf = bytes;
        this.pos = 0;
        this.end = bytes.length;
        this.hi = 0; // high 32 bits of the last varint
        this.depth = 0;
        this.view = null;
        this.typeName = typeName;
    }

    fail(what, at = this.pos) {
        return new Error(`${this.typeName}: invalid protobuf: ${what} at byte ${at}`);
    }

    // Reads a varint of at most 10 bytes: returns its low 32 bits unsigned, its high 32 bits in
    // this.hi.
    varint() {
        const b = this.buf;
        const end = this.end;
        let p = this.pos;
        if (p < end && b[p] < 128) {
            this.hi = 0;
            this.pos = p + 1;
            return b[p];
        }
        let lo = 0;
        let hi = 0;
        for (let i = 0; i < 10; i++) {
            if (p >= end) throw this.fail('truncated varint', this.pos);
            const x = b[p++];
            if (i < 4) lo |= (x & 127) << (7 * i);
            else if (i === 4) {
                lo |= (x & 127) << 28;
                hi = (x & 127) >>> 4;
            } else hi |= (x & 127) << (7 * i - 32);
            if (x < 128) {
                this.pos = p;
                this.hi = hi >>> 0;
                return lo >>> 0;
            }
        }
        throw this.fail('varint longer than 10 bytes', this.pos);
    }

    tag() {
        const at = this.pos;
        const t = this.varint();
        if (this.hi !== 0 || t >>> 3 === 0) throw this.fail(`invalid field tag ${this.hi !== 0 ? 'over 32 bits' : t}`, at);
        return t;
    }

    /** Throws unless tag `t` has wire type `wt` (a known field sent with another type). */
    want(t, wt) {
        if ((t & 7) !== wt) throw this.fail(`field ${t >>> 3} has wire type ${t & 7}, expected ${wt}`);
    }

    // A length prefix, checked against what is left of the current message.
    length() {
        const at = this.pos;
        const n = this.varint();
        if (this.hi !== 0 || n > this.end - this.pos) {
            const size = this.hi !== 0 ? 'over 2^32' : n;
            throw this.fail(`length ${size} runs past the end (${this.end - this.pos} bytes left)`, at);
        }
        return n;
    }

    /** Enters a length-delimited run (packed values, map entry); returns the end to restore. */
    push() {
        const n = this.length();
        const outer = this.end;
        this.end = this.pos + n;
        return outer;
    }

    /** Enters a sub-message; returns the end to hand to up(). */
    down() {
        if (++this.depth > MAX_DEPTH) throw this.fail(`messages nested deeper than ${MAX_DEPTH} levels`);
        return this.push();
    }

    up(outer) {
        this.end = outer;
        this.depth--;
    }

    uint32() {
        return this.varint();
    }

    int32() {
        return this.varint() | 0;
    }

    sint32() {
        const z = this.varint();
        return (z >>> 1) ^ -(z & 1);
    }

    bool() {
        return (this.varint() | this.hi) !== 0;
    }

    uint64() {
        const lo = this.varint();
        return toUint64(lo, this.hi);
    }

    int64() {
        const u = this.uint64();
        return this.hi >= 0x80000000 ? u - TWO_64 : u;
    }

    sint64() {
        const u = this.uint64();
        return (u >> 1n) ^ -(u & 1n);
    }

    skipBytes(n) {
        if (n > this.end - this.pos) throw this.fail(`truncated: ${n} bytes needed, ${this.end - this.pos} left`);
        const p = this.pos;
        this.pos = p + n;
        return p;
    }

    fixed32() {
        const p = this.skipBytes(4);
        const b = this.buf;
        return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
    }

    sfixed32() {
        return this.fixed32() | 0;
    }

    fixed64() {
        const lo = this.fixed32();
        return toUint64(lo, this.fixed32());
    }

    sfixed64() {
        return BigInt.asIntN(64, this.fixed64());
    }

    dataView() {
        return (this.view ??= new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength));
    }

    float() {
        return this.dataView().getFloat32(this.skipBytes(4), true);
    }

    double() {
        return this.dataView().getFloat64(this.skipBytes(8), true);
    }

    /** A view of the input, not a copy. */
    bytes() {
        const n = this.length();
        const p = this.pos;
        this.pos = p + n;
        return this.buf.subarray(p, p + n);
    }

    string() {
        const n = this.length();
        const b = this.buf;
        const p = this.pos;
        this.pos = p + n;
        if (n < 32) {
            // Short ASCII: no decoder call.
            let s = '';
            let i = p;
            for (; i < p + n && b[i] < 128; i++) s += String.fromCharCode(b[i]);
            if (i === p + n) return s;
        }
        try {
            return utf8Decoder.decode(b.subarray(p, p + n));
        } catch {
            throw this.fail('invalid UTF-8 in a string field', p);
        }
    }

    /** Skips the value of an unknown field (tag `t`), groups included. */
    skip(t) {
        switch (t & 7) {
            case 0:
                this.varint();
                break;
            case 1:
                this.skipBytes(8);
                break;
            case 2:
                this.skipBytes(this.length());
                break;
            case 3: {
                if (++this.depth > MAX_DEPTH) throw this.fail(`groups nested deeper than ${MAX_DEPTH} levels`);
                for (;;) {
                    const at = this.pos;
                    const u = this.tag();
                    if ((u & 7) === 4) {
                        if (u >>> 3 !== t >>> 3) throw this.fail(`group ${t >>> 3} closed as ${u >>> 3}`, at);
                        break;
                    }
                    this.skip(u);
                }
                this.depth--;
                break;
            }
            case 5:
                this.skipBytes(4);
                break;
            default:
                throw this.fail(`field ${t >>> 3} has ${(t & 7) === 4 ? 'an unmatched end-group' : `invalid wire type ${t & 7}`}`);
        }
    }
}

function toUint64(lo, hi) {
    if (hi === 0) return BigInt(lo);
    if (hi < 0x200000) return BigInt(hi * TWO_32 + lo); // below 2^53: exact as a Number
    return (BigInt(hi) << 32n) | BigInt(lo);
}

// Map keys are object keys, so strings: these give an integer or bool key back its type.

export function key32(k) {
    const n = Number(k);
    if (!Number.isInteger(n)) throw new TypeError(`map key ${JSON.stringify(k)} is not an integer`);
    return n;
}

export function key64(k) {
    try {
        return BigInt(k);
    } catch {
        throw new TypeError(`map key ${JSON.stringify(k)} is not an integer`);
    }
}

export function keyBool(k) {
    if (k !== 'true' && k !== 'false') throw new TypeError(`map key ${JSON.stringify(k)} is not true or false`);
    return k === 'true';
}

/** Sets a string-keyed map entry; a key "__proto__" becomes an entry, not the object's prototype. */
export function mapSet(map, k, v) {
    if (k === '__proto__') Object.defineProperty(map, k, { value: v, writable: true, enumerable: true, configurable: true });
    else map[k] = v;
}

/**
 * A message type: create(props) gives an object with every field at its default and the
 * properties of `props` that are fields (a shallow copy); encode(message) gives a Uint8Array
 * (missing fields, at any depth, count as defaults); decode(bytes) gives a new object with every
 * field present. `make`, `enc` and `dec` are the generated functions of the type.
 */
export function message(typeName, make, enc, dec, nested) {
    const type = {
        typeName,
        create(props) {
            const m = make();
            if (props != null) {
                for (const k in m) if (props[k] !== undefined) m[k] = props[k];
            }
            return m;
        },
        encode(m) {
            if (m == null || typeof m !== 'object') throw new TypeError(`${typeName}.encode: expected an object`);
            const w = takeWriter();
            enc(m, w);
            const out = w.finish();
            releaseWriter(w);
            return out;
        },
        decode(bytes) {
            return dec(new Reader(bytes, typeName), make());
        },
    };
    return Object.freeze(Object.assign(type, nested));
}

/** An enum: its values by name, and nameOf(number) → the name (undefined for an unknown value). */
export function enumType(values) {
    const names = new Map();
    for (const [name, number] of Object.entries(values)) if (!names.has(number)) names.set(number, name);
    return Object.freeze(
        Object.defineProperty(values, 'nameOf', { value: (number) => names.get(number), enumerable: false }),
    );
}
