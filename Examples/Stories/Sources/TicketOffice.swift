/// Charges customers' cards: an actor of its own, so charging is an `await` away from the
/// ticket office.
public actor PaymentService {
  /// The customers charged, in order.
  public private(set) var charged: [String] = []

  /// Creates a service that has charged no one.
  public init() {}

  /// Charges `customer`'s card.
  public func charge(_ customer: String) {
    charged.append(customer)
  }
}

/// What a test asks of a ticket office.
public protocol BoxOffice: Actor {
  /// The seats not sold yet.
  var seatsLeft: Int { get }
  /// Books a seat for `customer`; returns whether one was left.
  func book(for customer: String) async -> Bool
}

/// Sells the seats of a show, and gets actor reentrancy wrong: ``book(for:)`` checks that a
/// seat is left, awaits the payment, then takes the seat. While it awaits, the actor runs
/// other bookings, which pass the same check: two customers for the last seat both get it.
/// On real executors the second booking rarely arrives in that gap.
public actor NaiveTicketOffice: BoxOffice {
  /// The seats not sold yet; below zero when the show is overbooked.
  public private(set) var seatsLeft: Int
  private let payments: PaymentService

  /// Creates an office selling `seats` seats, charging through `payments`.
  public init(seats: Int, payments: PaymentService) {
    seatsLeft = seats
    self.payments = payments
  }

  /// Books a seat for `customer`; returns whether one was left.
  public func book(for customer: String) async -> Bool {
    guard seatsLeft > 0 else { return false }
    await payments.charge(customer)
    seatsLeft -= 1  // the check above may be stale: other bookings ran during the await
    return true
  }
}

/// The fixed office takes the seat before it awaits the payment, so the check and the
/// update are one turn of the actor, which no other booking can split.
public actor TicketOffice: BoxOffice {
  /// The seats not sold yet.
  public private(set) var seatsLeft: Int
  private let payments: PaymentService

  /// Creates an office selling `seats` seats, charging through `payments`.
  public init(seats: Int, payments: PaymentService) {
    seatsLeft = seats
    self.payments = payments
  }

  /// Books a seat for `customer`; returns whether one was left.
  public func book(for customer: String) async -> Bool {
    guard seatsLeft > 0 else { return false }
    seatsLeft -= 1
    await payments.charge(customer)
    return true
  }
}
