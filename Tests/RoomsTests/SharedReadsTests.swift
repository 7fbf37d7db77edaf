import Rooms
import XCTest

final class SharedReadsTests: XCTestCase {
    func testCallersArrivingWhileAQuestionIsOutShareTheNextRound() {
        var reads = SharedReads<String, Int>()
        XCTAssertTrue(reads.ask("show", for: 1), "nothing out: ask now")
        XCTAssertFalse(reads.ask("show", for: 2), "out already: wait for the next round")
        XCTAssertFalse(reads.ask("show", for: 3))
        XCTAssertTrue(reads.ask("other", for: 4), "another question is asked on its own")
        XCTAssertEqual(reads.questionsOut, 2)

        // The round out answers only the caller that was there when it went out.
        let first = reads.answered("show")
        XCTAssertEqual(first.callers, [1])
        XCTAssertTrue(first.askAgain, "callers 2 and 3 arrived meanwhile")
        XCTAssertFalse(reads.ask("show", for: 5), "the second round is out now")
        let second = reads.answered("show")
        XCTAssertEqual(second.callers, [2, 3])
        XCTAssertTrue(second.askAgain)
        let third = reads.answered("show")
        XCTAssertEqual(third.callers, [5])
        XCTAssertFalse(third.askAgain)

        XCTAssertEqual(reads.answered("other").callers, [4])
        XCTAssertEqual(reads.questionsOut, 0)
        XCTAssertTrue(reads.ask("show", for: 6), "all answered: the next caller asks anew")
        XCTAssertEqual(reads.answered("never asked").callers, [], "an answer nobody waits for is dropped")
    }
}
