// swift-tools-version:6.0
import PackageDescription

/// Release builds on Linux are fully static executables (the Swift runtime, LMDB,
/// libcrypto and glibc linked in): with no dynamic relocations to process, a query
/// starts in about a third of the time (callgrind: `--version` 5.9M -> 0.6M
/// instructions), which matters for a tool support staff run query by query. Debian's
/// liblmdb-dev, libssl-dev and libzstd-dev ship the static archives.
let staticStdlib: [LinkerSetting] = [
    .unsafeFlags(["-static-executable"], .when(platforms: [.linux], configuration: .release))
]

/// For the binaries linked with C libraries that ship no static archive: the Swift
/// runtime linked in all the same (loading libswiftCore.so cost each start 0.4 to 1.2
/// ms here: `pushtrail-cluster --version` took 6.8 ms, 5.6 without it).
let swiftRuntimeLinkedIn: [LinkerSetting] = [
    .unsafeFlags(["-static-stdlib"], .when(platforms: [.linux], configuration: .release))
]

/// No module imports `_Concurrency` or `_StringProcessing` (the compiler adds both to
/// every module unless told not to): pushtrail uses threads, not tasks, and no regex.
/// Left implicit, they are linked into the static binary (18.6 MB instead of 15.3 MB),
/// the concurrency runtime and libdispatch initialise at every start, and the runtime's
/// first protocol-conformance look-ups scan their records too: 13 fewer page faults and
/// about 5% off `head` (docs/PERFORMANCE.md).
let leanModules: [SwiftSetting] = [
    .unsafeFlags([
        "-Xfrontend", "-disable-implicit-concurrency-module-import",
        "-Xfrontend", "-disable-implicit-string-processing-module-import",
    ])
]

let package = Package(
    name: "pushtrail",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "pushtrail", targets: ["pushtrail"]),
        .executable(name: "pushtrail-server", targets: ["pushtrail-server"]),
        .executable(name: "pushtrail-stream", targets: ["pushtrail-stream"]),
        .executable(name: "pushtrail-cluster", targets: ["pushtrail-cluster"]),
        .library(name: "PushTrailModel", targets: ["PushTrailModel"]),
        .library(name: "PushTrailStore", targets: ["PushTrailStore"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        .systemLibrary(
            name: "CNats",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"]), .brew(["cnats"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        .target(name: "LMDBKit", dependencies: ["CLMDB"], swiftSettings: leanModules),
        // Pure: events, their rules, time, the task fold and the audit. No LMDB and no
        // system library, so the compiler keeps I/O out of it.
        .target(name: "PushTrailModel", swiftSettings: leanModules),
        .target(
            name: "PushTrailStore", dependencies: ["PushTrailModel", "LMDBKit", "CCrypto", "CZstd"],
            swiftSettings: leanModules),
        // HTML: the timeline drawn as iOS and Android show notifications, `report`'s page
        // and the server's support pages.
        .target(name: "PushTrailWeb", dependencies: ["PushTrailModel", "PushTrailStore"], swiftSettings: leanModules),
        .target(
            name: "PushTrailCLI", dependencies: ["PushTrailModel", "PushTrailStore", "PushTrailWeb"],
            swiftSettings: leanModules),
        .executableTarget(
            name: "pushtrail",
            dependencies: ["PushTrailCLI"],
            swiftSettings: leanModules,
            linkerSettings: staticStdlib
        ),
        // The HTTP server. Linked dynamically: Debian's libmicrohttpd needs GnuTLS,
        // whose p11-kit and libunistring ship no static archives, and the command line
        // stays a static executable that starts fast (docs/DESIGN.md).
        .target(
            name: "PushTrailServer", dependencies: ["PushTrailModel", "PushTrailStore", "PushTrailWeb", "CMicroHTTPD"],
            swiftSettings: leanModules),
        .executableTarget(
            name: "pushtrail-server", dependencies: ["PushTrailServer"], swiftSettings: leanModules,
            linkerSettings: swiftRuntimeLinkedIn),
        // Publishing to and consuming from NATS JetStream. Linked dynamically, as the
        // server is: Debian's libnats ships no static archive.
        .target(
            name: "PushTrailStream", dependencies: ["PushTrailModel", "PushTrailStore", "CNats"],
            swiftSettings: leanModules),
        .executableTarget(
            name: "pushtrail-stream", dependencies: ["PushTrailStream"], swiftSettings: leanModules,
            linkerSettings: swiftRuntimeLinkedIn),
        // An HTTP client over libcurl, for asking several `pushtrail serve` shards at once.
        // Linked dynamically: Debian ships libcurl.a but not the archives of what it needs
        // (nghttp2, librtmp, libssh2, libpsl, Kerberos, OpenLDAP), so neither `pushtrail`
        // nor PushTrailCLI may depend on it: the command line stays a static executable.
        .target(name: "PushTrailHTTPClient", dependencies: ["CCurl"], swiftSettings: leanModules),
        // The command line with that client: `pushtrail` runs it in its place for a
        // cluster with shards behind `pushtrail serve`.
        .executableTarget(
            name: "pushtrail-cluster", dependencies: ["PushTrailCLI", "PushTrailHTTPClient"],
            swiftSettings: leanModules,
            linkerSettings: swiftRuntimeLinkedIn),
        .executableTarget(
            name: "pushtrail-gen",
            swiftSettings: leanModules,
            linkerSettings: staticStdlib
        ),
        .testTarget(name: "LMDBKitTests", dependencies: ["LMDBKit", "TestSupport"]),
        .target(name: "TestSupport", dependencies: ["PushTrailModel"], path: "Tests/TestSupport"),
        .testTarget(name: "PushTrailModelTests", dependencies: ["PushTrailModel", "TestSupport"]),
        .testTarget(
            name: "PushTrailStoreTests", dependencies: ["PushTrailStore", "PushTrailModel", "TestSupport", "LMDBKit"]),
        .testTarget(
            name: "PushTrailCLITests",
            dependencies: ["PushTrailCLI", "PushTrailStore", "PushTrailModel", "PushTrailWeb", "LMDBKit"]),
        .testTarget(
            name: "PushTrailStreamTests", dependencies: ["PushTrailStream", "PushTrailStore", "PushTrailModel"]),
        .testTarget(
            name: "PushTrailServerTests",
            dependencies: [
                "PushTrailServer", "PushTrailCLI", "PushTrailStore", "PushTrailModel", "PushTrailWeb",
                "PushTrailHTTPClient",
            ]),
        .testTarget(name: "PushTrailHTTPClientTests", dependencies: ["PushTrailHTTPClient"]),
    ]
)
