package capacity

import "github.com/nightqueue/workshop/queuekit/prices"

// Prices is the dated price table sizings are priced with: prices.Table,
// the one table of the module, under the name this package always had.
type Prices = prices.Table

// Prices2026 is prices.Table2026, the us-east-1 list prices (see package
// prices for their date and sources).
var Prices2026 = prices.Table2026
