// Test support library; real sources land beside this file.
namespace sluice::test {}
