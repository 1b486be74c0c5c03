import PushTrailModel
import PushTrailStore

/// `pushtrail token`: the access tokens `pushtrail serve` accepts, kept hashed in the
/// store directory, so a secret is shown once, to the person who made it.
enum TokenCommand: Command {
    static let spec = CommandSpec(
        name: "token",
        summary: "Add, list or revoke the access tokens the server accepts (kept hashed in the store directory).",
        usage: ["token add NAME --role ingest|read|admin [--json]", "token list [--json]", "token revoke NAME"],
        options: [
            .option(
                "role", "ROLE", "what the new token may do: ingest (append), read, or admin (both)",
                completion: .choices(Role.allCases.map(\.rawValue))),
            OutputFormat.jsonFlag("add: print {\"name\", \"role\", \"created\", \"secret\"}; list: {\"tokens\": […]}"),
        ],
        operands: "add NAME | list | revoke NAME",
        operandCompletion: .choices(["add", "list", "revoke"]),
        discussion: """
            add prints the new secret on standard output, once: T=$(pushtrail token add ci --role ingest).
            The store keeps only its SHA-256, so a lost secret is revoked and replaced, not recovered.
            """)

    /// What `token` was asked to do, checked before the store is touched.
    enum Options: Sendable, Equatable {
        case add(name: String, role: Role, json: Bool)
        case list(json: Bool)
        case revoke(name: String)
    }

    /// One action and what it needs: a valid NAME for add and revoke, a role for add only.
    static func parse(_ arguments: Arguments, clock: () -> Timestamp) throws -> Options {
        func usage(_ message: String) -> UsageError { UsageError(message, command: "token") }
        guard let action = arguments.operands.first else {
            throw usage("name an action: add, list or revoke")
        }
        let rest = Array(arguments.operands.dropFirst())
        let json = try OutputFormat.parse(arguments) == .json
        let role = try arguments.value("role").map { text in
            guard let role = Role(rawValue: text) else {
                throw usage("--role takes ingest, read or admin, not \(Render.oneLine(text))")
            }
            return role
        }
        func name() throws -> String {
            guard rest.count == 1 else {
                throw usage(
                    rest.isEmpty
                        ? "token \(action) needs a NAME" : "token \(action) takes one NAME, but got \(rest.count)")
            }
            guard AccessTokens.isValidName(rest[0]) else {
                throw usage(
                    "a token name is 1 to \(AccessTokens.maximumNameLength) characters of A-Z, a-z, 0-9, '.', '_' "
                        + "and '-', not \(Render.oneLine(rest[0]))")
            }
            return rest[0]
        }
        switch action {
        case "add":
            let name = try name()
            guard let role else { throw usage("token add needs --role ingest, read or admin") }
            return .add(name: name, role: role, json: json)
        case "list":
            if let first = rest.first { throw usage("token list takes no NAME, but got \(Render.oneLine(first))") }
            if role != nil { throw usage("--role goes with token add") }
            return .list(json: json)
        case "revoke":
            let name = try name()
            if role != nil { throw usage("--role goes with token add") }
            if json { throw usage("--json goes with token add and token list") }
            return .revoke(name: name)
        default:
            throw usage("no token action \(Render.oneLine(action)): choose add, list or revoke")
        }
    }

    /// Adds, lists or revokes.
    static func run(_ options: Options, _ arguments: Arguments, _ context: Context) throws -> Int32 {
        switch options {
        case .add(let name, let role, let json):
            // Creates the store when missing, as ingest does: a server can be set up before
            // its first event.
            let store = try context.openStore(arguments, create: true)
            let created = context.clock()
            let secret: String
            do {
                secret = try AccessTokens.add(name: name, role: role, storePath: store.path, now: created)
            } catch let error as StoreError {
                // A name taken is a conflict (65), like an event id ingested twice; any
                // other failure is the store's (74).
                let taken = (try? AccessTokens.load(storePath: store.path))?.tokens.contains { $0.name == name }
                if taken == true { throw CommandError.data("\(error): revoke it first, or choose another name") }
                throw error
            }
            if json {
                context.stdout.line(
                    JSONValue.object([
                        ("name", .string(name)), ("role", .string(role.rawValue)),
                        ("created", .string(created.description)), ("secret", .string(secret)),
                    ]).serialized())
            } else {
                context.stdout.line(secret)
            }
            context.stderr.line(
                "pushtrail: added token \(name) (\(role.rawValue)); its secret is shown once, "
                    + "and the store keeps only its SHA-256")
            return ExitStatus.success
        case .list(let json):
            let store = try context.openStore(arguments, create: false)
            let tokens = try AccessTokens.load(storePath: store.path).tokens
            if json {
                let rows: [JSONValue] = tokens.map { t in
                    .object([
                        ("name", .string(t.name)), ("role", .string(t.role.rawValue)),
                        ("created", .string(t.created.description)),
                    ])
                }
                context.stdout.line(JSONValue.object([("tokens", .array(rows))]).serialized())
                return ExitStatus.success
            }
            guard !tokens.isEmpty else {
                context.stderr.line(
                    "pushtrail: no tokens in \(store.path): add one with pushtrail token add NAME --role ROLE")
                return ExitStatus.success
            }
            let width = tokens.map { $0.name.utf8.count }.max() ?? 0
            for t in tokens {
                context.stdout.line("\(t.name.padding(width))  \(t.role.rawValue.padding(6))  \(t.created)")
            }
            return ExitStatus.success
        case .revoke(let name):
            let store = try context.openStore(arguments, create: false)
            guard try AccessTokens.revoke(name: name, storePath: store.path) else {
                throw CommandError.notFound("no token named \(name) in \(store.path)")
            }
            context.stderr.line("pushtrail: revoked token \(name)")
            return ExitStatus.success
        }
    }
}
