#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Fitting human output to a terminal's width. Only lines meant for a screen go
/// through here, and only when the stream is a terminal: piped output stays whole.
enum Terminal {
    /// The terminal's columns on `fd`, else `$COLUMNS`; nil when unknown.
    static func columns(fd: Int32) -> Int? {
        var size = winsize()
        if ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = getenv("COLUMNS").map({ String(cString: $0) }), let n = Int(text), n > 0 { return n }
        return nil
    }

    /// How many columns `s` takes: characters outside ANSI escape sequences, East
    /// Asian wide characters and emoji counted twice.
    static func visibleWidth(_ s: String) -> Int {
        var width = 0
        var escape = false
        for c in s {
            if escape {
                if c.isLetter { escape = false }
                continue
            }
            if c == "\u{1B}" {
                escape = true
                continue
            }
            width += columns(of: c)
        }
        return width
    }

    /// `s` cut to `width` columns with an ellipsis, escape sequences kept (and reset
    /// after the cut so the colour does not run on).
    static func truncate(_ s: String, to width: Int) -> String {
        guard width > 1, visibleWidth(s) > width else { return s }
        var out = ""
        var used = 0
        var escape = false
        var styled = false
        for c in s {
            if escape {
                out.append(c)
                if c.isLetter { escape = false }
                continue
            }
            if c == "\u{1B}" {
                escape = true
                styled = true
                out.append(c)
                continue
            }
            let w = columns(of: c)
            if used + w > width - 1 { break }
            out.append(c)
            used += w
        }
        return out + "…" + (styled ? "\u{1B}[0m" : "")
    }

    /// Plain text broken at spaces into lines of at most `width` columns; the lines
    /// after the first start with `indent`. A word longer than a line stays whole.
    static func wrap(_ s: String, width: Int, indent: String) -> [String] {
        var lines: [String] = []
        var line = ""
        var lineWidth = 0
        for word in s.split(separator: " ", omittingEmptySubsequences: false) {
            let w = visibleWidth(String(word))
            if lineWidth > 0 && lineWidth + 1 + w > width {
                lines.append(line)
                line = indent + word
                lineWidth = indent.count + w
            } else {
                if lineWidth > 0 || !line.isEmpty {
                    line += " "
                    lineWidth += 1
                }
                line += word
                lineWidth += w
            }
        }
        lines.append(line)
        return lines
    }

    private static func columns(of c: Character) -> Int {
        guard let v = c.unicodeScalars.first?.value else { return 0 }
        switch v {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F,
            0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }
}
