//! What the tests of this crate share.

use zarrs::array::{Array, ArrayBytes};
use zarrs::storage::AsyncReadableStorageTraits;

/// Every byte of `array`, decoded (fixed-size values, or variable-length ones' bytes).
pub(crate) async fn bytes_of<S: ?Sized + AsyncReadableStorageTraits + 'static>(array: &Array<S>) -> Vec<u8> {
    match array.async_retrieve_array_subset(&array.subset_all()).await.unwrap() {
        ArrayBytes::Fixed(bytes) => bytes.to_vec(),
        ArrayBytes::Variable(variable) => variable.bytes().to_vec(),
        ArrayBytes::Optional(..) => panic!("{}: optional values", array.path()),
    }
}
