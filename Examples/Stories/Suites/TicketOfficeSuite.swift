import AsyncHarness
import Stories

/// Actor reentrancy: two customers book the last seat at once. The naive office checks
/// before its `await` and updates after it, so both can get the seat; the scheduled
/// strategy interleaves the two bookings at that `await`:
/// `EXAMPLES_ORDERING_BUG=1 swift run examples --filter TicketOffice --explore 100`.
let ticketOfficeSuite = Suite("Stories.TicketOffice") {
  Test("the naive office sells the last seat once", traits: orderingBugTraits) { t async throws in
    await expectLastSeatSoldOnce(by: NaiveTicketOffice(seats: 1, payments: PaymentService()), t)
  }

  Test("the office sells the last seat once") { t async throws in
    await expectLastSeatSoldOnce(by: TicketOffice(seats: 1, payments: PaymentService()), t)
  }
}

/// Two customers book `office`'s last seat at once: one gets it.
private func expectLastSeatSoldOnce(by office: some BoxOffice, _ t: TestContext) async {
  async let ada = office.book(for: "Ada")
  async let grace = office.book(for: "Grace")
  let booked = await [ada, grace].filter { $0 }.count
  t.expectEqual(booked, 1, "bookings of the last seat")
  t.expectEqual(await office.seatsLeft, 0)
}
