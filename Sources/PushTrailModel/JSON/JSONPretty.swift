/// Re-indents a parsed value for people, leaving every string and number exactly as
/// it was written.
public enum JSONPretty {
    /// Renders the value at `index`; `replace` may substitute the text of a member's
    /// value, given the member's path from the root (`device`, `payload.token`; used to
    /// mask device tokens).
    public static func render(_ json: JSONView, _ index: Int = 0, replace: (String) -> String? = { _ in nil }) -> String
    {
        var out = ""
        write(json, index, depth: 0, path: "", into: &out, replace: replace)
        return out
    }

    private static func write(
        _ json: JSONView, _ index: Int, depth: Int, path: String, into out: inout String,
        replace: (String) -> String?
    ) {
        let pad = String(repeating: "  ", count: depth + 1)
        switch json.kind(index) {
        case .object:
            let members = json.members(index)
            if members.isEmpty {
                out += "{}"
                return
            }
            out += "{\n"
            for (i, (k, v)) in members.enumerated() {
                out += pad + json.rawString(k) + ": "
                let member = path + (json.string(k) ?? "")
                if let substitute = replace(member) {
                    out += substitute
                } else {
                    write(json, v, depth: depth + 1, path: member + ".", into: &out, replace: replace)
                }
                out += i + 1 < members.count ? ",\n" : "\n"
            }
            out += String(repeating: "  ", count: depth) + "}"
        case .array:
            let elements = json.elements(index)
            if elements.isEmpty {
                out += "[]"
                return
            }
            // Short arrays of scalars stay on one line.
            if elements.count <= 8, elements.allSatisfy({ json.kind($0) != .object && json.kind($0) != .array }) {
                out += "[" + elements.map { json.rawString($0) }.joined(separator: ", ") + "]"
                return
            }
            out += "[\n"
            for (i, e) in elements.enumerated() {
                out += pad
                write(json, e, depth: depth + 1, path: path + "[].", into: &out, replace: replace)
                out += i + 1 < elements.count ? ",\n" : "\n"
            }
            out += String(repeating: "  ", count: depth) + "]"
        default:
            out += json.rawString(index)
        }
    }
}
