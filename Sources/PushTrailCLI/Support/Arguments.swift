/// One option a command declares. Help text, completion scripts and the man page are
/// all generated from these declarations.
public struct OptionSpec: Sendable {
    /// The long name without dashes (`store` for `--store`).
    public var name: String
    /// A one-letter alias (`n` for `-n`).
    public var short: Character?
    /// The value's placeholder (`DIR`); nil for a flag.
    public var value: String?
    public var help: String
    /// What a completion script offers for the value.
    public var completion: Completion = .none
    public var repeatable = false

    public enum Completion: Sendable {
        case none, file, directory
        case choices([String])
    }

    public static func flag(_ name: String, short: Character? = nil, _ help: String) -> OptionSpec {
        OptionSpec(name: name, short: short, value: nil, help: help)
    }

    public static func option(
        _ name: String, short: Character? = nil, _ value: String, _ help: String,
        completion: Completion = .none, repeatable: Bool = false
    ) -> OptionSpec {
        OptionSpec(name: name, short: short, value: value, help: help, completion: completion, repeatable: repeatable)
    }

    /// `-n, --name VALUE` as shown in help.
    var signature: String {
        var s = short.map { "-\($0), " } ?? ""
        s += "--\(name)"
        if let value { s += " \(value)" }
        return s
    }
}

/// What a command declares: its name, what it does, its options and operands.
public struct CommandSpec: Sendable {
    public var name: String
    /// One line: what the command does.
    public var summary: String
    /// Usage lines after `pushtrail ` (several forms allowed).
    public var usage: [String]
    public var options: [OptionSpec]
    /// The operands' placeholder for help (`FILE…`); nil when it takes none.
    public var operands: String?
    public var operandCompletion: OptionSpec.Completion = .none
    /// Paragraphs shown after the options.
    public var discussion: String = ""
}

/// A usage error: exit 2, with a pointer to `--help`.
public struct UsageError: Error, Equatable, CustomStringConvertible {
    public let message: String
    public let command: String?
    public init(_ message: String, command: String? = nil) {
        self.message = message
        self.command = command
    }
    public var description: String { message }
}

/// The parsed command line of one command.
public struct Arguments: Sendable {
    /// The options given with values, in the order first given, and their values.
    /// Arrays, not a dictionary: a command line has a handful, and the first
    /// `Dictionary` or `Set` of `String` in a process costs the Swift runtime a scan of
    /// every protocol conformance in the binary (~0.1M instructions).
    private var valueNames: [String] = []
    private var valueLists: [[String]] = []
    private var flagNames: [String] = []
    public var operands: [String] = []
    let command: String

    public var values: [String: [String]] {
        get {
            var out: [String: [String]] = [:]
            for (name, list) in zip(valueNames, valueLists) { out[name] = list }
            return out
        }
        set {
            valueNames = Array(newValue.keys)
            valueLists = valueNames.map { newValue[$0]! }
        }
    }

    public var flags: Set<String> {
        get { Set(flagNames) }
        set { flagNames = Array(newValue) }
    }

    public func value(_ name: String) -> String? { valueNames.firstIndex(of: name).flatMap { valueLists[$0].last } }
    public func all(_ name: String) -> [String] { valueNames.firstIndex(of: name).map { valueLists[$0] } ?? [] }
    public func flag(_ name: String) -> Bool { flagNames.contains(name) }
    public func has(_ name: String) -> Bool { valueNames.contains(name) || flagNames.contains(name) }

    fileprivate mutating func add(_ value: String, to name: String) {
        if let i = valueNames.firstIndex(of: name) {
            valueLists[i].append(value)
        } else {
            valueNames.append(name)
            valueLists.append([value])
        }
    }

    fileprivate mutating func set(flag name: String) {
        if !flagNames.contains(name) { flagNames.append(name) }
    }

    /// Parses `argv` (after the command name) against `spec`.
    ///
    /// `--name VALUE`, `--name=VALUE`, `-n VALUE`, `-nVALUE`, grouped short flags
    /// (`-rf`), and `--` to end options. An option that takes a value takes the next
    /// argument whatever it looks like, so `--at -2h` works.
    public static func parse(_ argv: [String], spec: CommandSpec) throws -> Arguments {
        var out = Arguments(command: spec.name)
        var i = 0
        var optionsEnded = false
        func find(long name: String) throws -> OptionSpec {
            if let o = spec.options.first(where: { $0.name == name }) { return o }
            let close = spec.options.map(\.name).filter { $0.hasPrefix(name) || name.hasPrefix($0) }
            let hint = close.count == 1 ? " (did you mean --\(close[0])?)" : ""
            throw UsageError("unknown option --\(name) for '\(spec.name)'\(hint)", command: spec.name)
        }
        func store(_ option: OptionSpec, _ value: String) throws {
            if !option.repeatable, out.valueNames.contains(option.name) {
                throw UsageError("--\(option.name) was given twice", command: spec.name)
            }
            out.add(value, to: option.name)
        }
        func takeValue(_ option: OptionSpec, shown: String) throws -> String {
            i += 1
            guard i < argv.count else {
                throw UsageError("\(shown) needs a value (\(option.value ?? "VALUE"))", command: spec.name)
            }
            return argv[i]
        }
        while i < argv.count {
            let arg = argv[i]
            if optionsEnded || arg == "-" || !arg.hasPrefix("-") {
                out.operands.append(arg)
            } else if arg == "--" {
                optionsEnded = true
            } else if arg.hasPrefix("--") {
                let body = arg.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                let option = try find(long: name)
                if let eq = body.firstIndex(of: "=") {
                    guard option.value != nil else {
                        throw UsageError("--\(name) takes no value", command: spec.name)
                    }
                    try store(option, String(body[body.index(after: eq)...]))
                } else if option.value != nil {
                    try store(option, try takeValue(option, shown: "--\(name)"))
                } else {
                    out.set(flag: option.name)
                }
            } else {
                // Short options, possibly grouped: -rf, -n5, -n 5.
                var rest = Substring(arg.dropFirst())
                while let c = rest.first {
                    rest = rest.dropFirst()
                    guard let option = spec.options.first(where: { $0.short == c }) else {
                        if c.isNumber || c == "-" {
                            throw UsageError(
                                "unexpected \(arg): to pass a value starting with '-', "
                                    + "put it after an option or after --",
                                command: spec.name)
                        }
                        throw UsageError("unknown option -\(c) for '\(spec.name)'", command: spec.name)
                    }
                    if option.value != nil {
                        try store(option, rest.isEmpty ? try takeValue(option, shown: "-\(c)") : String(rest))
                        break
                    }
                    out.set(flag: option.name)
                }
            }
            i += 1
        }
        if spec.operands == nil, let first = out.operands.first {
            throw UsageError("'\(spec.name)' takes no operands, but got \(first)", command: spec.name)
        }
        return out
    }
}

/// Help text, generated from a command's declaration.
enum HelpText {
    static func render(_ spec: CommandSpec, global: [OptionSpec]) -> String {
        var out = "Usage:\n"
        for form in spec.usage { out += "  pushtrail \(form)\n" }
        out += "\n\(spec.summary)\n"
        let own = spec.options.filter { o in !global.contains { $0.name == o.name } }
        if !own.isEmpty { out += "\nOptions:\n" + table(own) }
        out += "\nGlobal options:\n" + table(global)
        if !spec.discussion.isEmpty { out += "\n" + spec.discussion + "\n" }
        return out
    }

    static func table(_ options: [OptionSpec]) -> String {
        let width = min(30, (options.map { $0.signature.count }.max() ?? 0) + 2)
        var out = ""
        for o in options {
            let sig = o.signature
            if sig.count + 2 > width {
                out += "  \(sig)\n" + String(repeating: " ", count: width + 2) + o.help + "\n"
            } else {
                out += "  " + sig + String(repeating: " ", count: width - sig.count) + o.help + "\n"
            }
        }
        return out
    }
}
