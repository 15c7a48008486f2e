// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem

/// KioskSystem's thread team does KioskCore's row splitting (the two modules do not import each
/// other: the conformance is made here, where both are known).
extension ParallelRows: RowSplitter {}
