//! Images a user attaches to a prompt (ACP content blocks, RPC `images`), checked once before
//! they join the session: an image stays in every later request, so a bad one would fail every
//! turn after it. Valid base64, at most [`MAX_IMAGE_BYTES`] decoded, and bytes of the type it
//! claims, one of the four every provider takes (PNG, JPEG, GIF, WebP).

use base64::Engine as _;
use tandem_ai::ImageContent;

use crate::tools::image_mime;

/// The largest image a prompt may carry, decoded (providers take 5 to 20 MB).
pub const MAX_IMAGE_BYTES: usize = 20 * 1024 * 1024;

/// `data` (base64) as an image of type `mime`, or why not (the caller names the image).
pub fn checked_image(data: &str, mime: &str) -> Result<ImageContent, String> {
    let too_large = || {
        format!(
            "the image is larger than {} MB; send a smaller one",
            MAX_IMAGE_BYTES / (1024 * 1024)
        )
    };
    // Base64 is 4 characters for 3 bytes: a block this long cannot be small enough.
    if data.len() / 4 * 3 > MAX_IMAGE_BYTES + 3 {
        return Err(too_large());
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("the image data is not valid base64 ({e})"))?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(too_large());
    }
    match image_mime(&bytes) {
        Some(actual) if actual == mime => Ok(ImageContent {
            data: data.to_string(),
            mime_type: mime.to_string(),
        }),
        Some(actual) => Err(format!(
            "the image is declared {mime} but its bytes are {actual}"
        )),
        None => Err(format!(
            "{mime:?} is not an image type Tandem can send (PNG, JPEG, GIF or WebP), or the \
             bytes are not such an image"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1×1 PNG.
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

    #[test]
    fn only_real_images_of_the_declared_type_pass() {
        assert_eq!(
            checked_image(PNG, "image/png").map(|i| i.mime_type),
            Ok("image/png".into())
        );
        let err = |data: &str, mime: &str| checked_image(data, mime).expect_err(mime);
        assert!(err("not base64!", "image/png").contains("not valid base64"));
        assert!(err(PNG, "image/jpeg").contains("declared image/jpeg but its bytes are image/png"));
        assert!(err("aGVsbG8=", "text/plain").contains("not an image type"));
        assert!(err(&"A".repeat(MAX_IMAGE_BYTES / 3 * 4 + 8), "image/png").contains("larger than"));
    }
}
