//! What both APIs make their replies of: fresh ids, rough token counts, and a text cut into
//! the pieces a stream sends.

/// A fresh id with this prefix, like the APIs' own (`msg_01…`).
pub(crate) fn id(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let tail: String = (0..24).map(|_| char::from(ALPHABET[fastrand::usize(..ALPHABET.len())])).collect();
    format!("{prefix}01{tail}")
}

/// A rough token count for usage figures: a token per four bytes, at least one.
pub(crate) fn tokens(text: &str) -> u64 {
    u64::try_from(text.len() / 4).unwrap_or(u64::MAX).max(1)
}

/// `text` cut into at most `n` pieces of about the same length, on character boundaries.
pub(crate) fn pieces_of(text: &str, n: usize) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    if chars.is_empty() {
        return vec![text];
    }
    let per = chars.len().div_ceil(n.max(1));
    let mut starts: Vec<usize> = chars.iter().step_by(per).map(|(i, _)| *i).collect();
    starts.push(text.len());
    starts.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

/// `text` cut in two at the character nearest its middle.
pub(crate) fn halves(text: &str) -> (&str, &str) {
    let middle = text.char_indices().nth(text.chars().count() / 2).map_or(text.len(), |(i, _)| i);
    text.split_at(middle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_text_on_character_boundaries() {
        assert_eq!(pieces_of("héllo wörld", 3).concat(), "héllo wörld");
        assert_eq!(pieces_of("héllo wörld", 3).len(), 3);
        assert_eq!(pieces_of("", 3), vec![""]);
        assert_eq!(halves("añb"), ("a", "ñb"));
    }
}
