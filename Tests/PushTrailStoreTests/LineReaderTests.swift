import Foundation
import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

@Suite("Line reader")
struct LineReaderTests {
    /// Every line of `content` read from a file with the given reader settings.
    func readLines(_ content: [UInt8], chunkSize: Int = 1 << 20, maxKept: Int = 16 << 20) throws -> (
        lines: [InputLine], bytesRead: Int
    ) {
        try withTemporaryDirectory { dir throws in
            let path = dir + "/input.ndjson"
            try writeFile(path, content)
            let fd = open(path, O_RDONLY)
            try #require(fd >= 0)
            defer { close(fd) }
            let reader = LineReader(fd: fd, chunkSize: chunkSize, maxKept: maxKept)
            var lines: [InputLine] = []
            while let line = try reader.next() {
                lines.append(line)
                if lines.count > content.count + 1 {
                    Issue.record("the reader does not stop")
                    break
                }
            }
            #expect(try reader.next() == nil, "the end of input stays the end")
            return (lines, reader.bytesRead)
        }
    }

    func readLines(_ text: String, chunkSize: Int = 1 << 20, maxKept: Int = 16 << 20) throws -> [InputLine] {
        try readLines(Array(text.utf8), chunkSize: chunkSize, maxKept: maxKept).lines
    }

    func contents(_ lines: [InputLine]) -> [String] { lines.map { String(decoding: $0.content, as: UTF8.self) } }

    @Test("LF and CRLF lines are read, CRLF without its carriage return")
    func lineEndings() throws {
        let (lines, bytesRead) = try readLines(Array("one\ntwo\r\nthree\n".utf8))
        #expect(contents(lines) == ["one", "two", "three"])
        #expect(lines[1].bytes == Array("two\r".utf8))
        #expect(lines.map(\.number) == [1, 2, 3])
        #expect(lines.allSatisfy { !$0.truncated })
        #expect(bytesRead == 15)
    }

    @Test("a last line without a newline is read")
    func lastLineWithoutNewline() throws {
        #expect(try contents(readLines("a\nlast")) == ["a", "last"])
        #expect(try contents(readLines("only")) == ["only"])
        #expect(try contents(readLines("a\r\nlast\r")) == ["a", "last"])
    }

    @Test("a final newline does not make an extra empty line")
    func finalNewline() throws {
        #expect(try contents(readLines("a\nb\n")) == ["a", "b"])
    }

    @Test("empty lines are read as empty lines with their numbers")
    func emptyLines() throws {
        let lines = try readLines("\n\na\n\r\n\nb")
        #expect(contents(lines) == ["", "", "a", "", "", "b"])
        #expect(lines.map(\.number) == [1, 2, 3, 4, 5, 6])
    }

    @Test("empty input has no lines")
    func emptyInput() throws {
        #expect(try readLines("").isEmpty)
    }

    @Test("a line longer than the chunk size is returned whole")
    func lineLongerThanChunk() throws {
        let long = String((0..<100).map { Character(UnicodeScalar(UInt8(0x41 + $0 % 26))) })
        let lines = try readLines(long + "\nshort\n" + long, chunkSize: 16)
        #expect(contents(lines) == [long, "short", long])
        #expect(lines.allSatisfy { !$0.truncated })
        #expect(lines.map(\.number) == [1, 2, 3])
    }

    @Test("lines of every length around the chunk size are split correctly")
    func linesAcrossChunkBoundaries() throws {
        var expected: [String] = []
        for length in 0...50 {
            expected.append(String(repeating: Character(UnicodeScalar(UInt8(0x61 + length % 26))), count: length))
        }
        for crlf in [false, true] {
            let text = expected.map { $0 + (crlf ? "\r\n" : "\n") }.joined()
            for chunk in [1, 2, 15, 16, 17, 64] {
                let lines = try readLines(text, chunkSize: chunk)
                #expect(contents(lines) == expected, "chunk \(chunk), crlf \(crlf)")
                #expect(lines.allSatisfy { !$0.truncated })
            }
        }
    }

    @Test("a line longer than the reader keeps is cut there and marked truncated")
    func truncatedLine() throws {
        let long = String(repeating: "x", count: 60) + String(repeating: "y", count: 40)
        let lines = try readLines(long + "\nnext\n", chunkSize: 16, maxKept: 40)
        try #require(lines.count == 2)
        #expect(lines[0].bytes == Array(long.utf8.prefix(40)))
        #expect(lines[0].truncated)
        #expect(contents([lines[1]]) == ["next"])
        #expect(!lines[1].truncated)
        #expect(lines[1].number == 2)
    }

    @Test("a last line longer than the reader keeps is cut and marked truncated")
    func truncatedLastLine() throws {
        let lines = try readLines(String(repeating: "z", count: 100), chunkSize: 16, maxKept: 33)
        try #require(lines.count == 1)
        #expect(lines[0].bytes.count == 33)
        #expect(lines[0].truncated)
    }

    @Test("a line of exactly the kept size is not truncated")
    func lineAtKeptSize() throws {
        let lines = try readLines(String(repeating: "k", count: 40) + "\n", chunkSize: 16, maxKept: 40)
        #expect(lines.map(\.bytes.count) == [40])
        #expect(lines.map(\.truncated) == [false])
    }

    @Test("a line longer than the reader keeps is cut even when it fits in one chunk")
    func truncatedWithinChunk() throws {
        let lines = try readLines(String(repeating: "w", count: 100) + "\nnext\n", chunkSize: 4096, maxKept: 10)
        try #require(lines.count == 2)
        #expect(lines[0].bytes == Array(repeating: UInt8(ascii: "w"), count: 10))
        #expect(lines[0].truncated)
        #expect(contents([lines[1]]) == ["next"])
    }

    @Test("lines written to a pipe in small pieces are joined")
    func pipeInPieces() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer { close(readEnd) }
        let pieces = ["{\"a\":", "1}\n{\"b\"", ":2}\r", "\n\n", "tail"]
        let writer = Thread {
            for piece in pieces {
                _ = piece.utf8CString.withUnsafeBufferPointer { write(writeEnd, $0.baseAddress!, piece.utf8.count) }
                usleep(5_000)
            }
            close(writeEnd)
        }
        writer.start()
        let reader = LineReader(fd: readEnd, chunkSize: 8)
        var lines: [InputLine] = []
        while let line = try reader.next() { lines.append(line) }
        #expect(contents(lines) == [#"{"a":1}"#, #"{"b":2}"#, "", "tail"])
        #expect(reader.bytesRead == pieces.joined().utf8.count)
    }
}
