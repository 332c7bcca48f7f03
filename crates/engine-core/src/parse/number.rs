//! Numbers as tools print them.

use super::ParseError;

/// Parses `123`, `-1.5e3`, `1,234.5` (thousands separators only in groups of three).
pub fn parse_number(s: &str) -> Result<f64, ParseError> {
    let t = s.trim();
    if let Ok(v) = t.parse::<f64>()
        && v.is_finite()
    {
        return Ok(v);
    }
    let grouped = t.split('.').next().unwrap_or("");
    let parts: Vec<&str> = grouped.trim_start_matches('-').split(',').collect();
    if parts.len() > 1
        && (1..=3).contains(&parts[0].len())
        && parts[1..].iter().all(|p| p.len() == 3)
        && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_digit()))
        && let Ok(v) = t.replace(',', "").parse::<f64>()
    {
        return Ok(v);
    }
    Err(ParseError::NotANumber(t.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_number(" 667.1 ").unwrap(), 667.1);
        assert_eq!(parse_number("1,234.5").unwrap(), 1234.5);
        assert_eq!(parse_number("-2e3").unwrap(), -2000.0);
        assert!(parse_number("1,23").is_err());
        assert!(parse_number("abc").is_err());
        assert!(parse_number("inf").is_err());
    }
}
