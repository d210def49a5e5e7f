import Orders
import Testing

/// The tests a team would write for the ordering bugs, in Swift Testing: each bug's test fails
/// only in some orders of the code's Swift concurrency; its fixed twin's test passes in every
/// order.
@Suite struct OrdersTests {
  @Test func twoWithdrawalsNeverOverdraw() async {
    let account = Account(balance: 100)
    async let first = account.withdraw(80)
    async let second = account.withdraw(80)
    _ = await (first, second)
    #expect(await account.balance >= 0)
  }

  @Test func twoWithdrawalsCheckingAfterTheAuditNeverOverdraw() async {
    let account = Account(balance: 100)
    async let first = account.withdrawCheckingAfterTheAudit(80)
    async let second = account.withdrawCheckingAfterTheAudit(80)
    _ = await (first, second)
    #expect(await account.balance >= 0)
  }

  @Test func aThumbnailIsRenderedOnce() async {
    let thumbnails = Thumbnails()
    async let first = thumbnails.thumbnail(for: "cat")
    async let second = thumbnails.thumbnail(for: "cat")
    _ = await (first, second)
    #expect(await thumbnails.renderer.renders == 1)
  }

  @Test func aThumbnailJoiningTheRenderInFlightIsRenderedOnce() async {
    let thumbnails = Thumbnails()
    async let first = thumbnails.thumbnailRenderedOnce(for: "cat")
    async let second = thumbnails.thumbnailRenderedOnce(for: "cat")
    _ = await (first, second)
    #expect(await thumbnails.renderer.renders == 1)
  }

  @Test func pagesComeInTheOrderAskedFor() async {
    #expect(await Pages.fetchAll([1, 2, 3]) == ["page 1", "page 2", "page 3"])
  }

  @Test func pagesPlacedByTheirIndexComeInTheOrderAskedFor() async {
    #expect(await Pages.fetchAllInOrder([1, 2, 3]) == ["page 1", "page 2", "page 3"])
  }

  @Test func theDoorbellWakesTheOneWaiting() async {
    let doorbell = Doorbell()
    async let woken: Void = doorbell.wait()
    Task { doorbell.ring() }
    await woken
  }

  @Test func aDoorbellRememberingEarlyRingsWakesTheOneWaiting() async {
    let doorbell = Doorbell(remembersEarlyRings: true)
    async let woken: Void = doorbell.wait()
    Task { doorbell.ring() }
    await woken
  }
}
